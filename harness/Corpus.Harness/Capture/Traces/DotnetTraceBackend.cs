using System.Globalization;
using System.Text.Json;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// CoreCLR's trace backend: EventPipe's sample profiler through the pinned dotnet-trace local tool, which launches the
/// run as its child (`collect --format Speedscope -- program`) and converts the trace to speedscope when it ends. The
/// tool runs from its restored package (`dotnet exec …/dotnet-trace.dll`), not `dotnet tool run`, so it does not
/// depend on the cell's folder being inside the checkout; the case's environment goes to the child alone (through
/// `env`), so a knob such as DOTNET_TieredCompilation=0 does not slow the tool. Its diagnostic sockets go to the
/// run's private TMPDIR. An `alloc` trace records the runtime provider's GC keyword at verbose level instead (its
/// GCAllocationTick events: one per ~100 KB allocated, with the type and the managed stack), read from the nettrace
/// with TraceEvent.
/// </summary>
public sealed class DotnetTraceBackend(string root) : ITraceBackend
{
    public const string Tool = "dotnet-trace";
    public string Name => Tool;

    /// <summary>The tool's version pinned in .config/dotnet-tools.json; null when it is not pinned there.</summary>
    public static string? PinnedVersion(string root)
    {
        var manifest = Path.Combine(root, ".config", "dotnet-tools.json");
        if (!File.Exists(manifest)) return null;
        using var doc = JsonDocument.Parse(File.ReadAllText(manifest));
        return doc.RootElement.GetProperty("tools").TryGetProperty(Tool, out var t) ? t.GetProperty("version").GetString() : null;
    }

    /// <summary>The restored tool's entry assembly (NuGet's global packages folder, as `dotnet tool restore` left it).</summary>
    public static string? ToolAssembly(string root)
    {
        if (PinnedVersion(root) is not { } version) return null;
        var packages = Environment.GetEnvironmentVariable("NUGET_PACKAGES") is { Length: > 0 } p ? p
            : Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
        var tools = Path.Combine(packages, Tool, version, "tools");
        return Directory.Exists(tools) ? Directory.GetFiles(tools, Tool + ".dll", SearchOption.AllDirectories).Order(StringComparer.Ordinal).FirstOrDefault() : null;
    }

    private string? _assembly;

    public string? Unavailable
    {
        get
        {
            if (PinnedVersion(root) is not { } v) return $"{Tool} is not pinned in .config/dotnet-tools.json";
            _assembly ??= ToolAssembly(root);
            return _assembly is null ? $"{Tool} {v} is not restored (make setup runs `dotnet tool restore`)" : null;
        }
    }

    public Launch Wrap(Launch launch, TraceRun run)
    {
        var dotnet = SubjectKinds.Which("dotnet") ?? "/usr/share/dotnet/dotnet";
        var tmp = launch.Env.TryGetValue("TMPDIR", out var t) ? t : run.Tmp;
        List<string> args = [_assembly ?? ToolAssembly(run.Root)!, "collect", "-o", run.File("trace.nettrace"), "--show-child-io", "true"];
        if (run.Spec.Kind == TraceCapture.Alloc)
            args.AddRange(["--providers", AllocProvider]);
        else
            // EventPipe's sample profiler takes a stack every millisecond; it has no rate to set.
            args.AddRange(["--format", "Speedscope", "--profile", "dotnet-sampled-thread-time"]);
        args.Add("--");
        args.Add("env");
        args.AddRange(launch.Env.Select(kv => $"{kv.Key}={kv.Value}"));
        args.Add(launch.File);
        args.AddRange(launch.Args);
        return new Launch(dotnet, args, new Dictionary<string, string> { ["TMPDIR"] = tmp, ["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1" });
    }

    /// <summary>The runtime provider, GC keyword (0x1), verbose (5): the level GCAllocationTick needs.</summary>
    public const string AllocProvider = "Microsoft-Windows-DotNETRuntime:0x1:5";

    public Task<TraceModel> ReadAsync(TraceRun run, RunResult result, CancellationToken cancel)
    {
        if (run.Spec.Kind == TraceCapture.Alloc)
        {
            var nettrace = run.File("trace.nettrace");
            if (!File.Exists(nettrace) || new FileInfo(nettrace).Length == 0)
                throw new TraceException($"{Tool} wrote no {Path.GetFileName(nettrace)} ({result.Status}): " + ErrorLines(result));
            return Task.FromResult(ReadAllocations(nettrace, run.File("trace.etlx")) with { Files = [nettrace] });
        }
        var speedscope = run.File("trace.speedscope.json");
        if (!File.Exists(speedscope))
            throw new TraceException($"{Tool} wrote no {Path.GetFileName(speedscope)} ({result.Status}): " + ErrorLines(result));
        var model = ReadSpeedscope(File.ReadAllText(speedscope), "cpu");
        return Task.FromResult(model with { Files = [run.File("trace.nettrace"), speedscope] });
    }

    private static string ErrorLines(RunResult result) =>
        string.Join(" ", (result.Stderr + "\n" + result.Stdout).Split('\n').Where(l => l.Contains("rror") || l.Contains("xception")).Take(3));

    /// <summary>
    /// A nettrace's GCAllocationTick events into the model: one sample per event, weighted by the bytes allocated since
    /// the last tick of its heap (so weights add up to what the program allocated), its managed stack root first with
    /// frames named as dotnet-trace's speedscope names them ("Module!Method(args)"), and the allocated type as the leaf
    /// ("[alloc] System.Byte[]"), so a share of a type and a share of a method read alike. TraceEvent resolves the
    /// stacks through an .etlx it writes beside the trace; it is deleted once read (the nettrace holds the same).
    /// </summary>
    public static TraceModel ReadAllocations(string nettrace, string etlx)
    {
        var samples = new List<TraceSample>();
        var unresolved = 0;
        try
        {
            using (var log = new TraceLog(TraceLog.CreateFromEventPipeDataFile(nettrace, etlx)))
                foreach (var e in log.Events)
                {
                    if (e is not GCAllocationTickTraceData tick) continue;
                    var frames = new List<string> { "[alloc] " + (string.IsNullOrEmpty(tick.TypeName) ? "?" : tick.TypeName) };
                    for (var s = tick.CallStack(); s is not null; s = s.Caller)
                    {
                        var method = s.CodeAddress.FullMethodName;
                        if (string.IsNullOrEmpty(method)) { unresolved++; method = "0x" + s.CodeAddress.Address.ToString("x", CultureInfo.InvariantCulture); }
                        frames.Add(s.CodeAddress.ModuleName is { Length: > 0 } module ? module + "!" + method : method);
                    }
                    frames.Reverse();
                    samples.Add(new TraceSample(frames, tick.AllocationAmount64) { Thread = $"Thread ({tick.ThreadID})", Time = tick.TimeStampRelativeMSec / 1000 });
                }
        }
        catch (Exception e) when (e is not IOException)
        {
            // A nettrace cut short (a killed run) fails deep in TraceEvent's deserializer, with its own exception types.
            throw new TraceException($"TraceEvent could not read {Path.GetFileName(nettrace)}: {e.GetType().Name}: {e.Message}");
        }
        finally
        {
            File.Delete(etlx);
        }
        var note = unresolved > 0 ? $"{unresolved} frames named no method (no rundown for them)" : null;
        return new TraceModel(TraceCapture.Alloc, "bytes", samples, []) { Note = note };
    }

    /// <summary>
    /// A speedscope file into the model: evented profiles (dotnet-trace: open and close of frames, in milliseconds)
    /// become one sample per span of time with the stack open during it, weighted by its length; sampled profiles keep
    /// their samples and weights. dotnet-trace's own top frames (process, "Threads", the thread) are dropped, the
    /// thread kept as the sample's thread. The main thread is the thread whose id the process frame ("Process64 dotnet
    /// (1234) Args: …") carries.
    /// </summary>
    public static TraceModel ReadSpeedscope(string json, string kind)
    {
        using var doc = JsonDocument.Parse(json);
        var frames = doc.RootElement.GetProperty("shared").GetProperty("frames").EnumerateArray().Select(f => f.GetProperty("name").GetString()!).ToList();
        var pid = frames.Select(f => ProcessFrame.Match(f)).FirstOrDefault(m => m.Success)?.Groups[1].Value;
        var samples = new List<TraceSample>();
        var unit = "samples";
        foreach (var profile in doc.RootElement.GetProperty("profiles").EnumerateArray())
        {
            var thread = profile.TryGetProperty("name", out var n) ? n.GetString() : null;
            if (profile.GetProperty("type").GetString() == "evented")
            {
                unit = profile.GetProperty("unit").GetString() ?? "milliseconds";
                var stack = new List<int>();
                double? last = null;
                foreach (var e in profile.GetProperty("events").EnumerateArray())
                {
                    var at = e.GetProperty("at").GetDouble();
                    if (last is { } from && at > from && stack.Count > 0)
                        samples.Add(new TraceSample(Clean(stack.Select(i => frames[i])), at - from) { Thread = thread, Time = from / 1000 });
                    last = at;
                    var frame = e.GetProperty("frame").GetInt32();
                    if (e.GetProperty("type").GetString() == "O") stack.Add(frame);
                    else if (stack.LastIndexOf(frame) is var i and >= 0) stack.RemoveRange(i, stack.Count - i);
                }
            }
            else
            {
                var weights = profile.GetProperty("weights").EnumerateArray().Select(w => w.GetDouble()).ToList();
                var k = 0;
                foreach (var s in profile.GetProperty("samples").EnumerateArray())
                    samples.Add(new TraceSample(Clean(s.EnumerateArray().Select(i => frames[i.GetInt32()])), k < weights.Count ? weights[k++] : 1) { Thread = thread });
            }
        }
        var main = pid is null ? null : $"Thread ({pid})";
        return new TraceModel(kind, unit, samples, []) { MainThread = samples.Any(x => x.Thread == main) ? main : null };
    }

    private static readonly System.Text.RegularExpressions.Regex ProcessFrame = new(@"^Process(?:32|64)? .*?\((\d+)\)(?: Args:|$)");

    /// <summary>dotnet-trace's grouping frames above the thread's own: "Process64 …", "(Non-Activities)", "Threads", "Thread (N)".</summary>
    private static IReadOnlyList<string> Clean(IEnumerable<string> stack) =>
        stack.SkipWhile(f => f.StartsWith("Process", StringComparison.Ordinal) || f == "(Non-Activities)" || f == "Threads"
                             || (f.StartsWith("Thread (", StringComparison.Ordinal) && f.EndsWith(')')))
             .ToList();
}
