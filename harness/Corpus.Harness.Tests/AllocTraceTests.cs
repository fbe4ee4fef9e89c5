using Corpus.Harness.Capture;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Tests;

/// <summary>
/// An `alloc` trace end to end: a small program that allocates 1000-byte arrays in Fill, built and run through the
/// real runner, its traced run under dotnet-trace on .NET 8 (GC allocation ticks, read with TraceEvent) or Mono's log
/// profiler (every allocation, read with mprof-report), judged by the trace evidence and drawn. The corpus's .cache (the net8 subject) and .config (the pinned
/// dotnet-trace) are linked into a scratch root.
/// </summary>
public sealed class AllocTraceTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("corpus-alloc-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Theory]
    [InlineData("net8", "dotnet-trace")]
    [InlineData("mono", "mono-log-profiler")]
    public async Task AnAllocTraceWeighsTheAllocatingFrameInBytes(string subject, string backend)
    {
        foreach (var link in new[] { ".cache", ".config" })
            Directory.CreateSymbolicLink(Path.Combine(_root, link), Path.Combine(RoslynTriggerTests.Root, link));
        var dir = Path.Combine(_root, "repros", "alloc");
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "AllocProg.csproj"), """
            <Project Sdk="Microsoft.NET.Sdk">
              <PropertyGroup><OutputType>Exe</OutputType><TargetFrameworks>net8.0;net10.0</TargetFrameworks></PropertyGroup>
            </Project>
            """);
        // C# that Mono's mcs also compiles.
        File.WriteAllText(Path.Combine(dir, "src", "Program.cs"), """
            using System;
            using System.Collections.Generic;
            using System.Runtime.CompilerServices;
            static class Program
            {
                static void Main(string[] args)
                {
                    var keep = new List<byte[]>();
                    Fill(keep, int.Parse(args[0]));
                    Console.WriteLine("filled " + keep.Count);
                }
                [MethodImpl(MethodImplOptions.NoInlining)]
                static void Fill(List<byte[]> keep, int mb)
                {
                    for (var i = 0; i < mb * 1024; i++) { keep.Add(new byte[1000]); if (keep.Count > 4096) keep.Clear(); }
                }
            }
            """);
        File.WriteAllText(Path.Combine(dir, "repro.json"), """
            { "id": "alloc", "title": "t", "category": "perf", "references": ["r"], "languages": ["csharp"],
              "subjects": ["net8", "mono"], "variants": ["bug"],
              "build": { "dotnet": { "project": "src/AllocProg.csproj", "assembly": "AllocProg" }, "mono": { "sources": ["src/*.cs"] } },
              "budget": { "timeoutSec": 60, "memoryMB": 512 },
              "cases": [ { "id": "main", "args": ["128"],
                           "signature": { "process": { "exit": "zero", "output": ["filled"] },
                                          "trace": { "samples": [ { "frame": "Program[.:]Fill", "under": "Program[.:]Main", "min": 0.9 } ] } },
                           "capture": { "trace": { "kind": "alloc" } } } ] }
            """);
        var m = Manifest.Load(Path.Combine(dir, "repro.json"));
        var runner = new CellRunner(new RunOptions(_root, Path.Combine(_root, "artifacts", "run"), Keep: true, _ => { }),
                                    new Builder(_root, ToolRunner.Instance), ToolRunner.Instance);
        var cell = await runner.RunAsync(m, m.Cases[0], "bug", SubjectKinds.Default.Resolve(subject, _root), null);
        Assert.True(cell.Outcome == Outcome.Reproduced, cell.Detail + " | " + string.Join("; ", cell.CaptureErrors));

        var record = Assert.Single(cell.Traces);
        Assert.Equal((backend, "alloc", null), (record.Backend, record.Kind, record.Error));
        var trace = cell.Trace!;
        Assert.Equal("bytes", trace.Unit);
        // 128 Ki arrays of 1000 bytes: the weights are the bytes allocated, not a count of events (CoreCLR's ticks of
        // ~100 KB; Mono's one sample per type and stack).
        Assert.InRange(trace.TotalWeight, 128 * 1024 * 1000.0, 150 * 1024 * 1024.0);
        if (subject == "net8") Assert.InRange(trace.Samples.Count, 1000, 2000);
        var inFill = trace.Samples.Where(s => s.Frames.Any(f => f.Contains("Program.Fill(") || f.Contains("Program:Fill ("))).ToList();
        Assert.True(inFill.Sum(s => s.Weight) > 0.9 * trace.TotalWeight, $"Fill holds {inFill.Sum(s => s.Weight)} of {trace.TotalWeight} bytes");
        // Its arrays, and the list's growth (byte[][]) a little.
        Assert.True(inFill.Where(s => s.Frames[^1] == "[alloc] System.Byte[]").Sum(s => s.Weight) > 0.95 * inFill.Sum(s => s.Weight));
        // Reproduced: the trace evidence (Fill's share of Main's bytes) held; the flame graph draws the type as the leaf.
        Assert.Contains("[alloc] System.Byte[]", File.ReadAllText(record.FlameGraph!));
        Assert.NotNull(record.Slowdown);
        // The cost, for the docs' table (dotnet test --logger "console;verbosity=detailed" shows it).
        Console.WriteLine($"alloc trace cost on {subject}: {Path.GetFileName(record.File)} {new FileInfo(record.File!).Length} bytes, all files {record.Bytes} bytes, "
                          + $"{record.WallSeconds:0.00} s traced, {record.UntracedWallSeconds:0.00} s untraced, x{record.Slowdown:0.00}, read {record.ReadSeconds:0.00} s");
    }
}
