using System.Diagnostics;
using Corpus.Harness.Capture;
using Corpus.Harness.Fixtures;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Xunit.Abstractions;

namespace Corpus.Harness.Tests;

/// <summary>.reg files are read strictly, and a manifest's fixture names its file and field when it is wrong.</summary>
public sealed class RegFileTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-regfile-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private const string NgenCorrupt = "Windows Registry Editor Version 5.00\r\n\r\n"
        + "[HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\.NETFramework\\v2.0.50727\\NGenService\\Roots\\C:/AnyNameWillDo.dll]\r\n"
        + "[HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\.NETFramework\\v2.0.50727\\NGenService\\Roots\\C:/AnyNameWillDo.dll\\0]\r\n"
        + "\"ImageList\"=hex:00,69,00,6f\r\n";

    [Fact]
    public void TheWriteUpsFileHasTwoKeysAndOneBinaryValue()
    {
        var s = RegFile.ParseText(NgenCorrupt);
        Assert.Equal(2, s.Count);
        Assert.EndsWith("C:/AnyNameWillDo.dll\\0", s[1].Key);
        Assert.Equal(["\"ImageList\"=hex:00,69,00,6f"], s[1].Values);
        Assert.Equal("ImageList", RegFile.ValueName(s[1].Values[0]));
        Assert.StartsWith("HKLM\\SOFTWARE\\", RegFile.Short(s[0].Key));
    }

    [Theory]
    [InlineData("REGEDIT5\n[HKEY_LOCAL_MACHINE\\X]", "line 1: a .reg file starts with")]
    [InlineData("Windows Registry Editor Version 5.00\n[HKEY_LOCAL_MACHIN\\X]", "line 2: 'HKEY_LOCAL_MACHIN' is not a registry hive")]
    [InlineData("Windows Registry Editor Version 5.00\n\"a\"=dword:1", "line 2: a value before any [KEY] line")]
    [InlineData("Windows Registry Editor Version 5.00\n[-HKEY_CURRENT_USER\\X]\n\"a\"=dword:1", "line 3: [-HKEY_CURRENT_USER\\X] deletes the key")]
    [InlineData("Windows Registry Editor Version 5.00\n[HKEY_CURRENT_USER\\X\n", "line 2: a key line must end with ']'")]
    [InlineData("Windows Registry Editor Version 5.00\n[HKEY_CURRENT_USER\\X]\nImageList=1", "line 3: not a value line")]
    public void ABrokenFileNamesTheLine(string text, string problem) =>
        Assert.StartsWith(problem, Assert.Throws<FormatException>(() => RegFile.ParseText(text)).Message);

    [Fact]
    public void UTF16ExportsOfRegExeAreRead()
    {
        var bytes = new byte[] { 0xFF, 0xFE }.Concat(System.Text.Encoding.Unicode.GetBytes(NgenCorrupt)).ToArray();
        Assert.Equal(2, RegFile.ParseText(RegFile.Decode(bytes)).Count);
    }

    [Fact]
    public void TheFinalStateFollowsTheFilesInOrder()
    {
        var corrupt = RegFile.ParseText(NgenCorrupt);
        var removeRoots = RegFile.ParseText("Windows Registry Editor Version 5.00\n"
                                            + "[-HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\.NETFramework\\v2.0.50727\\NGenService\\Roots]");
        var state = RegFile.FinalState([corrupt, removeRoots]);
        Assert.Single(state);
        Assert.True(state.Single().Value.Deleted);
        var again = RegFile.FinalState([corrupt, removeRoots, corrupt]);
        Assert.Equal(2, again.Count);
        Assert.All(again.Values, v => Assert.False(v.Deleted));
    }

    private string WriteRepro(string fixture, string subjects = "[\"wine\"]", string signature = "\"fixture\": { \"output\": [\"seen\"] }")
    {
        var dir = Path.Combine(_root, "repros", "fx");
        Directory.CreateDirectory(Path.Combine(dir, "cpp"));
        Directory.CreateDirectory(Path.Combine(dir, "fixture"));
        File.WriteAllText(Path.Combine(dir, "cpp", "CMakeLists.txt"), "add_executable(read read.cpp)\n");
        File.WriteAllText(Path.Combine(dir, "fixture", "bug.reg"), NgenCorrupt);
        File.WriteAllText(Path.Combine(dir, "fixture", "bad.reg"), "Windows Registry Editor Version 5.00\n[HKEY_NOWHERE\\X]\n");
        File.WriteAllText(Path.Combine(dir, "repro.json"), $$"""
            { "id": "fx", "title": "t", "category": "leak", "references": ["r"], "languages": ["cpp"], "subjects": {{subjects}},
              "variants": ["bug", "fix"], "build": { "cmake": { "dir": "cpp" } },
              "cases": [ { "id": "c", "program": "cmake:read", "args": ["{variant}"], "fixture": {{fixture}},
                           "signature": { {{signature}} } } ] }
            """);
        return Path.Combine(dir, "repro.json");
    }

    private InputException Error(string file)
    {
        var e = Assert.Throws<InputException>(() => Manifest.Load(file));
        Assert.Equal(file, e.File);
        return e;
    }

    [Fact]
    public void AMissingFileOfOneVariantIsNamed()
    {
        var e = Error(WriteRepro("{ \"registry\": [\"fixture/{variant}.reg\"] }"));
        Assert.Equal("cases[0].fixture.registry[0]", e.Field);
        Assert.Contains("'fixture/fix.reg' (variant fix) is not a file", e.Problem);
    }

    [Fact]
    public void ABrokenRegFileIsNamedWithItsLine()
    {
        var e = Error(WriteRepro("{ \"registry\": [\"fixture/bug.reg\", \"fixture/bad.reg\"] }"));
        Assert.Equal("cases[0].fixture.registry[1]", e.Field);
        Assert.Contains("fixture/bad.reg: line 2: 'HKEY_NOWHERE' is not a registry hive", e.Problem);
    }

    [Fact]
    public void ASubjectWithoutARegistryIsRefused()
    {
        var e = Error(WriteRepro("{ \"registry\": [\"fixture/bug.reg\"] }", subjects: "[\"wine\", \"linux\"]"));
        Assert.Equal("cases[0].fixture", e.Field);
        Assert.Contains("subject 'linux' has no Windows registry", e.Problem);
    }

    [Fact]
    public void AFixtureSignatureNeedsAFixture()
    {
        var file = WriteRepro("null");
        File.WriteAllText(file, File.ReadAllText(file).Replace("\"fixture\": null,", ""));
        Assert.Equal("cases[0].signature.fixture", Error(file).Field);
    }

    [Fact]
    public void ALedgerEntryOfADeadHarnessIsTakenUpAndSaysWhatItCameTo()
    {
        if (OperatingSystem.IsWindows()) return;
        // A fixture applied to a Windows registry, by a harness that no longer exists (pid 999999, start time 1).
        var state = Path.Combine(_root, "state");
        Directory.CreateDirectory(state);
        File.WriteAllText(Path.Combine(state, "fixture.json"), """
            { "Host": { "kind": "windows" }, "Saved": [ { "Key": "HKEY_LOCAL_MACHINE\\SOFTWARE\\X", "Existed": false } ] }
            """);
        var ledgers = Path.Combine(_root, "ledger");
        Directory.CreateDirectory(ledgers);
        File.WriteAllLines(Path.Combine(ledgers, "harness-999999-1.ledger"), ["map 999999", $"reg {state}"]);
        var left = Containment.Leftovers.Clean(ledgers, Capture.ToolRunner.Instance);
        Assert.Equal([$"registry fixture {state}: not restored: a Windows registry, and this harness is not on Windows"], left.Registry);
        Assert.Contains("; registry fixture ", left.ToString());
        Assert.Empty(Directory.GetFiles(ledgers, "harness-*.ledger"));
    }

    [Fact]
    public void AGoodFixtureLoadsWithItsFilesPerVariant()
    {
        File.WriteAllText(Path.Combine(_root, "x"), "");
        var file = WriteRepro("{ \"registry\": [\"fixture/bug.reg\"] }");
        var m = Manifest.Load(file);
        Assert.Equal([Path.Combine(m.Dir, "fixture", "bug.reg")], m.Cases[0].Fixture!.Files(m.Dir, "fix"));
        Assert.True(m.Cases[0].Signature.Has("fixture"));
    }
}

/// <summary>
/// Registry fixtures against Wine's real registry (reg.exe of a private prefix, harness/wine/cell.sh): applied,
/// restored byte for byte, a failed restore caught; and the real harness killed between apply and restore.
/// </summary>
public sealed class RegistryFixtureWineTests(ITestOutputHelper output) : IDisposable
{
    private static readonly string CorpusDll = typeof(Program).Assembly.Location;
    private static readonly string Checkout = FindCheckout();
    private readonly string _dir = Directory.CreateDirectory(
        Path.Combine(Checkout, ".cache", "test-fixture", Guid.NewGuid().ToString("N")[..12])).FullName;

    private readonly List<string> _cells = [];

    private static string FindCheckout()
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
            if (File.Exists(Path.Combine(d.FullName, "harness", "wine", "cell.sh"))) return d.FullName;
        throw new InvalidOperationException("no corpus checkout above the test assembly");
    }

    public void Dispose()
    {
        // Only the cells made here: a prefix's dosdevices/z: links to /, so nothing here walks a prefix's tree.
        foreach (var cell in _cells)
            ToolRunner.Instance.Run("bash", [Path.Combine(Checkout, "harness", "wine", "cell.sh"), "down", cell], TimeSpan.FromMinutes(1));
        try { Directory.Delete(_dir, recursive: true); } catch (IOException) { }
    }

    /// <summary>The machine state before the fixture: a key of our own with values and a subkey.</summary>
    private const string Machine = "Windows Registry Editor Version 5.00\n\n"
        + "[HKEY_LOCAL_MACHINE\\Software\\CorpusTest\\Roots]\n\"Count\"=dword:00000002\n\"Name\"=\"two roots\"\n"
        + "[HKEY_LOCAL_MACHINE\\Software\\CorpusTest\\Roots\\a.dll]\n\"ImageList\"=hex:01,02,03\n";

    /// <summary>Changes a value, adds a key with a binary value, deletes a subkey, and adds a key under a missing parent.</summary>
    private const string Fixture = "Windows Registry Editor Version 5.00\n\n"
        + "[HKEY_LOCAL_MACHINE\\Software\\CorpusTest\\Roots]\n\"Count\"=dword:00000003\n"
        + "[HKEY_LOCAL_MACHINE\\Software\\CorpusTest\\Roots\\C:/AnyNameWillDo.dll\\0]\n\"ImageList\"=hex:00,69,00,6f\n"
        + "[-HKEY_LOCAL_MACHINE\\Software\\CorpusTest\\Roots\\a.dll]\n"
        + "[HKEY_LOCAL_MACHINE\\Software\\CorpusNew\\Deep]\n\"x\"=\"y\"\n";

    private WineRegistry UpCell(string name)
    {
        var cell = Path.Combine(_dir, name);
        _cells.Add(cell);
        var up = ToolRunner.Instance.Run("bash", [Path.Combine(Checkout, "harness", "wine", "cell.sh"), "up", cell], TimeSpan.FromMinutes(2));
        Assert.True(up.ExitCode == 0, up.Describe("cell.sh up"));
        return new WineRegistry(SubjectKindsWine(), Path.Combine(cell, "env"), ToolRunner.Instance);
    }

    private static string SubjectKindsWine() => Subjects.SubjectKinds.Which("wine") ?? "/usr/bin/wine";

    private string WriteFile(string name, string text)
    {
        var f = Path.Combine(_dir, name);
        File.WriteAllText(f, text);
        return f;
    }

    private static byte[] Export(IRegistryHost host, string key, string file)
    {
        var r = host.Reg(["export", key, host.FileArg(file), "/y"]);
        Assert.True(r.ExitCode == 0, r.Describe("reg export"));
        return File.ReadAllBytes(file);
    }

    [Fact]
    public void AppliedThenRestoredByteForByteInAWinePrefix()
    {
        var host = UpCell("roundtrip");
        Assert.Equal(0, host.Reg(["import", host.FileArg(WriteFile("machine.reg", Machine))]).ExitCode);
        var before = Export(host, "HKLM\\Software\\CorpusTest", Path.Combine(_dir, "machine-before.reg"));
        var clock = Stopwatch.StartNew();
        var fixture = RegistryFixture.Apply(host, [WriteFile("fixture.reg", Fixture)], Path.Combine(_dir, "state"));
        output.WriteLine($"apply {clock.ElapsedMilliseconds} ms: {fixture.Applied}; saved {string.Join(", ", fixture.Saved)}");
        Assert.Equal("3 value(s) read back as written, 1 deleted key(s) absent", fixture.Applied);
        Assert.Equal(["HKEY_LOCAL_MACHINE\\Software\\CorpusTest\\Roots", "HKEY_LOCAL_MACHINE\\Software\\CorpusNew"],
                     fixture.Saved.Select(s => s.Key));
        Assert.NotEqual(before, Export(host, "HKLM\\Software\\CorpusTest", Path.Combine(_dir, "machine-applied.reg")));
        clock.Restart();
        var (ok, detail) = fixture.Restore();
        output.WriteLine($"restore {clock.ElapsedMilliseconds} ms: {detail}");
        Assert.True(ok, detail);
        Assert.Equal(before, Export(host, "HKLM\\Software\\CorpusTest", Path.Combine(_dir, "machine-after.reg")));
        Assert.NotEqual(0, host.Reg(["query", "HKLM\\Software\\CorpusNew"]).ExitCode);
    }

    /// <summary>A host whose reg.exe "forgets" the restore's import: the verification must catch it.</summary>
    private sealed class ForgetfulHost(IRegistryHost inner) : IRegistryHost
    {
        public bool Forget;
        public string Describe => inner.Describe;
        public string FileArg(string path) => inner.FileArg(path);
        public IReadOnlyDictionary<string, string> Spec => inner.Spec;
        public ToolResult Reg(IReadOnlyList<string> args) =>
            Forget && args[0] == "import" ? new ToolResult(0, "", "", 0, false) : inner.Reg(args);
    }

    [Fact]
    public void ARestoreThatDoesNotGiveTheMachineBackIsCaught()
    {
        var host = new ForgetfulHost(UpCell("forgetful"));
        Assert.Equal(0, host.Reg(["import", host.FileArg(WriteFile("machine.reg", Machine))]).ExitCode);
        var fixture = RegistryFixture.Apply(host, [WriteFile("fixture.reg", Fixture)], Path.Combine(_dir, "state"));
        host.Forget = true;
        var (ok, detail) = fixture.Restore();
        output.WriteLine(detail);
        Assert.False(ok);
        Assert.Contains("NOT restored: ", detail);
        Assert.Contains("HKEY_LOCAL_MACHINE\\Software\\CorpusTest\\Roots", detail);
    }
}

/// <summary>
/// The real harness (corpus.dll) SIGKILLed while a Wine cell's registry fixture is applied (its program holds).
/// With the supervisor alive, the cell's prefix goes with the cell, and the next run says the fixture went with it.
/// With the supervisor killed too, the prefix and its wineserver are still there, fixture applied; the next run
/// restores it from the ledger, byte for byte, before taking the prefix down. The template never changes.
/// </summary>
public sealed class RegistryFixtureKillTests(ITestOutputHelper output) : IDisposable
{
    private static readonly string CorpusDll = typeof(Program).Assembly.Location;
    private static readonly string Checkout = FindCheckout();
    private readonly string _root = Directory.CreateDirectory(
        Path.Combine(Checkout, ".cache", "test-fixture", "kill-" + Guid.NewGuid().ToString("N")[..12])).FullName;

    private static string FindCheckout()
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
            if (File.Exists(Path.Combine(d.FullName, "harness", "wine", "cell.sh"))) return d.FullName;
        throw new InvalidOperationException("no corpus checkout above the test assembly");
    }

    public void Dispose()
    {
        // Whatever a failed test left: the corpus's own cleanup, then the folder.
        ToolRunner.Instance.Run("dotnet", [CorpusDll, "clean", "--root", _root], TimeSpan.FromMinutes(2));
        // The links first, as links: a recursive delete must never reach the checkout's harness/ or Wine cache.
        foreach (var link in new[] { Path.Combine(_root, "harness"), Path.Combine(_root, ".cache", "wine") })
            if (new FileInfo(link).LinkTarget is not null) File.Delete(link);
        try { Directory.Delete(_root, recursive: true); } catch (IOException) { }
    }

    /// <summary>A corpus whose one Wine cell changes an existing key of the template (Notepad's) and holds for 2 minutes.</summary>
    private void WriteCorpus()
    {
        // The checkout's harness scripts and Wine cache, the test's own repros, ledger and artifacts.
        Directory.CreateSymbolicLink(Path.Combine(_root, "harness"), Path.Combine(Checkout, "harness"));
        Directory.CreateDirectory(Path.Combine(_root, ".cache"));
        Directory.CreateSymbolicLink(Path.Combine(_root, ".cache", "wine"), Path.Combine(Checkout, ".cache", "wine"));
        var repro = Path.Combine(_root, "repros", "fx");
        Directory.CreateDirectory(Path.Combine(repro, "cpp"));
        File.WriteAllText(Path.Combine(repro, "cpp", "CMakeLists.txt"), """
            cmake_minimum_required(VERSION 3.16)
            project(hold LANGUAGES CXX)
            add_executable(hold hold.cpp)
            """);
        File.WriteAllText(Path.Combine(repro, "cpp", "hold.cpp"), """
            #include <windows.h>
            #include <cstdio>
            int main() { std::printf("HOLDING\n"); std::fflush(stdout); Sleep(120000); return 0; }
            """);
        File.WriteAllText(Path.Combine(repro, "fixture.reg"),
                          "Windows Registry Editor Version 5.00\n\n[HKEY_LOCAL_MACHINE\\Software\\Microsoft\\Notepad]\n\"CorpusFixture\"=dword:00000001\n");
        File.WriteAllText(Path.Combine(repro, "repro.json"), """
            { "id": "fx", "title": "holds with a fixture applied", "category": "hang", "references": ["a containment test"],
              "languages": ["cpp"], "subjects": ["wine"], "variants": ["bug"], "build": { "cmake": { "dir": "cpp" } },
              "budget": { "timeoutSec": 150, "memoryMB": 1024 },
              "cases": [ { "id": "hold", "program": "cmake:hold", "args": ["{variant}"], "startMarker": "HOLDING",
                           "fixture": { "registry": ["fixture.reg"] },
                           "signature": { "fixture": { "output": ["HOLDING"] } } } ] }
            """);
        Directory.CreateDirectory(Path.Combine(_root, "expected"));
        File.WriteAllText(Path.Combine(_root, "expected", "fx.json"), """
            { "repro": "fx", "cells": [ { "case": "hold", "variant": "bug", "subject": "wine", "outcome": "clean", "reason": "never: killed" } ] }
            """);
    }

    /// <summary>The template's registry, every Windows version's: never walked recursively (dosdevices/z: links to /).</summary>
    private static string TemplateHash()
    {
        var t = Path.Combine(Checkout, ".cache", "wine", "template");
        var files = new[] { t, Path.Combine(t, ".corpus", "win7"), Path.Combine(t, ".corpus", "win10") }
            .SelectMany(d => Directory.GetFiles(d, "*.reg")).Order().ToList();
        Assert.NotEmpty(files);
        return Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(files.SelectMany(File.ReadAllBytes).ToArray()));
    }

    private sealed record Held(Process Harness, string CellDir, string Prefix, string StateDir);

    private async Task<Held> StartHoldingAsync()
    {
        WriteCorpus();
        var psi = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in new[] { CorpusDll, "run", "--root", _root, "--repro", "fx" }) psi.ArgumentList.Add(a);
        var harness = Process.Start(psi)!;
        harness.OutputDataReceived += (_, _) => { };
        harness.ErrorDataReceived += (_, e) => { if (e.Data is not null) output.WriteLine($"harness: {e.Data}"); };
        harness.BeginOutputReadLine();
        harness.BeginErrorReadLine();
        // The build comes first (mingw, a few seconds), then the cell's prefix, the fixture, the program.
        var until = DateTime.UtcNow.AddSeconds(150);
        string? stdout = null;
        while (DateTime.UtcNow < until && !harness.HasExited)
        {
            // artifacts/<run-id>/fx/hold/bug/wine/run.stdout; never a recursive walk (a prefix's z: links to /).
            stdout = Directory.Exists(Path.Combine(_root, "artifacts"))
                ? Directory.GetDirectories(Path.Combine(_root, "artifacts")).Select(d => Path.Combine(d, "fx", "hold", "bug", "wine", "run.stdout"))
                           .FirstOrDefault(File.Exists) : null;
            if (stdout is not null && File.ReadAllText(stdout).Contains("HOLDING")) break;
            stdout = null;
            await Task.Delay(100);
        }
        if (stdout is null) Assert.Fail("the cell's program did not start with its fixture applied\n" + await WhyNotHeldAsync(harness));
        var cell = Path.GetDirectoryName(stdout)!;
        var prefix = Path.Combine(cell, "wine", "run-shared", "prefix");
        Assert.True(Directory.Exists(prefix), $"no shared prefix at {prefix}");
        return new Held(harness, cell, prefix, Path.Combine(cell, "fixture"));
    }

    /// <summary>What the cell left when its program never held: the harness's end, the run's files and facts.</summary>
    private async Task<string> WhyNotHeldAsync(Process harness)
    {
        using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        try { await harness.WaitForExitAsync(cts.Token); } catch (OperationCanceledException) { harness.Kill(entireProcessTree: true); }
        var said = new System.Text.StringBuilder($"harness exit {(harness.HasExited ? harness.ExitCode : -1)}\n");
        var artifacts = Path.Combine(_root, "artifacts");
        if (!Directory.Exists(artifacts)) return said.Append("no artifacts/").ToString();
        foreach (var cell in Directory.GetDirectories(artifacts).Select(d => Path.Combine(d, "fx", "hold", "bug", "wine")).Where(Directory.Exists))
            foreach (var f in Directory.GetFiles(cell).Order())
            {
                var text = File.ReadAllText(f);
                said.Append($"== {Path.GetFileName(f)} ({text.Length} chars)\n").Append(text.Length > 6000 ? text[..6000] + " …\n" : text + "\n");
            }
        output.WriteLine(said.ToString());
        return said.ToString();
    }

    /// <summary>reg.exe in the held cell's prefix, through its env file (the prefix's own wineserver).</summary>
    private static ToolResult Reg(Held h, params string[] args) =>
        new WineRegistry(Subjects.SubjectKinds.Which("wine") ?? "/usr/bin/wine", Path.Combine(h.CellDir, "wine", "run-shared", "env"),
                         ToolRunner.Instance).Reg(args);

    private static List<int> ProcessesOfPrefix(string prefix)
    {
        var pids = new List<int>();
        foreach (var proc in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(proc), out var pid)) continue;
            try
            {
                if (File.ReadAllText(Path.Combine(proc, "environ")).Split('\0').Contains($"WINEPREFIX={prefix}")
                    && File.ReadAllText(Path.Combine(proc, "stat")) is var st && st[st.LastIndexOf(')') + 2] != 'Z')
                    pids.Add(pid);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException) { }
        }
        return pids;
    }

    private static int SupervisorOf(int harness) =>
        Directory.EnumerateDirectories("/proc").Select(d => int.TryParse(Path.GetFileName(d), out var p) ? p : 0)
                 .FirstOrDefault(p => p > 0 && p != harness && CmdLine(p).Contains($"corpus-supervisor\0{harness}"));

    private static string CmdLine(int pid)
    {
        try { return File.ReadAllText($"/proc/{pid}/cmdline"); }
        catch (IOException) { return ""; }
    }

    private async Task<string> CleanAsync()
    {
        var clean = Process.Start(new ProcessStartInfo("dotnet", [CorpusDll, "clean", "--root", _root]) { RedirectStandardOutput = true })!;
        var said = await clean.StandardOutput.ReadToEndAsync();
        await clean.WaitForExitAsync();
        output.WriteLine(said);
        Assert.Equal(0, clean.ExitCode);
        return said;
    }

    [Fact]
    public async Task HarnessAndSupervisorKilledTheNextRunRestoresTheFixtureByteForByte()
    {
        var template = TemplateHash();
        var h = await StartHoldingAsync();
        var supervisor = SupervisorOf(h.Harness.Id);
        Assert.True(supervisor != 0, "no supervisor runs for the harness");
        Containment.Native.Kill(supervisor, Containment.Native.SIGKILL);
        h.Harness.Kill();
        await h.Harness.WaitForExitAsync();
        // Nobody restored it: the prefix's wineserver still holds the fixture.
        var seen = Reg(h, "query", "HKLM\\Software\\Microsoft\\Notepad", "/v", "CorpusFixture");
        Assert.True(seen.ExitCode == 0, seen.Describe("reg query"));
        Assert.NotEmpty(ProcessesOfPrefix(h.Prefix));

        var clock = Stopwatch.StartNew();
        var said = await CleanAsync();
        output.WriteLine($"corpus clean: {clock.ElapsedMilliseconds} ms");
        Assert.Contains($"registry fixture {h.StateDir}: restored: 0 key(s) absent again and their parents' listings unchanged, "
                        + "1 export(s) identical byte for byte", said);
        // The restore's own export, compared here too.
        Assert.Equal(File.ReadAllBytes(Path.Combine(h.StateDir, "before-0.reg")), File.ReadAllBytes(Path.Combine(h.StateDir, "before-0.after.reg")));
        Assert.Empty(ProcessesOfPrefix(h.Prefix));
        Assert.False(Directory.Exists(h.Prefix), "the cell's prefix outlived the cleanup");
        Assert.Empty(Directory.GetFiles(Path.Combine(_root, ".cache", "ledger"), "harness-*.ledger"));
        Assert.Equal(template, TemplateHash());
    }

    [Fact]
    public async Task HarnessKilledTheSupervisorTakesThePrefixAndTheNextRunSaysSo()
    {
        var template = TemplateHash();
        var h = await StartHoldingAsync();
        h.Harness.Kill();
        await h.Harness.WaitForExitAsync();
        var until = DateTime.UtcNow.AddSeconds(20);
        while (DateTime.UtcNow < until && (ProcessesOfPrefix(h.Prefix).Count > 0 || Directory.Exists(h.Prefix))) await Task.Delay(50);
        Assert.Empty(ProcessesOfPrefix(h.Prefix));
        Assert.False(Directory.Exists(h.Prefix), "the supervisor did not take the cell's prefix down");
        var said = await CleanAsync();
        Assert.Contains($"registry fixture {h.StateDir}: not restored: its Wine prefix is gone with the cell", said);
        Assert.Empty(Directory.GetFiles(Path.Combine(_root, ".cache", "ledger"), "harness-*.ledger"));
        Assert.Equal(template, TemplateHash());
    }
}
