using System.Globalization;
using System.Text.RegularExpressions;
using Corpus.Harness.Containment;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// Mono's trace backend: the log profiler in sample mode (`--profile=log:nodefaults,sample=HZ,maxframes=64,output=F`),
/// read back with `mprof-report --debug`, whose decoding lists every sample hit with its managed frames (leaf first).
/// mprof-report's own sample report keeps only the leaf method, which cannot say what a sample was under. An `alloc`
/// trace records every allocation with its backtrace (`log:nodefaults,alloc,maxframes=64`), read from mprof-report's
/// allocation summary with its backtraces (`--traces`), which already sums the bytes per type and stack.
/// </summary>
public sealed class MonoLogProfilerBackend : ITraceBackend
{
    public const int DefaultHz = 1000, MaxFrames = 64;
    public string Name => "mono-log-profiler";

    public string? Unavailable => SubjectKinds.Which("mprof-report") is null ? "mprof-report is not installed (Debian's mono-utils, part of mono-complete; make setup installs it)" : null;

    public Launch Wrap(Launch launch, TraceRun run)
    {
        if (run.Spec.Kind == TraceCapture.Alloc)
            return launch with { Args = [$"--profile=log:nodefaults,alloc,maxframes={MaxFrames},output={run.File("trace.mlpd")}", .. launch.Args] };
        var hz = run.Spec.FrequencyHz ?? DefaultHz;
        // nodefaults must come first: without it Mono 6.8 adds its pre-5.6 events (GC, JIT, exceptions) to the file.
        var profile = string.Create(CultureInfo.InvariantCulture, $"--profile=log:nodefaults,sample={hz},maxframes={MaxFrames},output={run.File("trace.mlpd")}");
        return launch with { Args = [profile, .. launch.Args] };
    }

    public Task<TraceModel> ReadAsync(TraceRun run, RunResult result, CancellationToken cancel)
    {
        var mlpd = run.File("trace.mlpd");
        if (!File.Exists(mlpd) || new FileInfo(mlpd).Length == 0)
            throw new TraceException($"Mono's log profiler wrote no {Path.GetFileName(mlpd)} ({result.Status})");
        if (run.Spec.Kind == TraceCapture.Alloc)
        {
            // The summary is small (one entry per type and stack): kept beside the .mlpd. mprof-report cuts
            // backtraces at 6 frames unless told.
            var summary = run.File("mprof-report-alloc.txt");
            var a = run.Tools.Run("mprof-report", ["--traces", $"--maxframes={MaxFrames}", "--reports=alloc", $"--out={summary}", mlpd], TimeSpan.FromMinutes(5));
            if (a.ExitCode != 0 || !File.Exists(summary)) throw new TraceException(a.Describe("mprof-report"));
            return Task.FromResult(ReadAllocations(File.ReadLines(summary)) with { Files = [mlpd, summary] });
        }
        var text = run.File("mprof-report.txt");
        var r = run.Tools.Run("mprof-report", ["--debug", "--reports=sample", $"--out={text}", mlpd], TimeSpan.FromMinutes(5));
        if (r.ExitCode != 0 || !File.Exists(text)) throw new TraceException(r.Describe("mprof-report"));
        try
        {
            var model = Read(File.ReadLines(text), "cpu");
            return Task.FromResult(model with { Files = [mlpd] });
        }
        finally
        {
            // Every decoded event, tens of MB: the model and the .mlpd hold what it said.
            File.Delete(text);
        }
    }

    private static readonly Regex TypeLine = new(@"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S.*)$"), FromLine = new(@"^\t(\d+) bytes from:$");

    /// <summary>
    /// mprof-report's allocation summary with backtraces into samples: each type line ("BYTES COUNT AVERAGE TYPE") is
    /// followed by "\tN bytes from:" and its frames (one per "\t\t" line, root first); each backtrace becomes one sample
    /// weighted N bytes, with the type as the leaf ("[alloc] System.Byte[]", as the CoreCLR backend names it). The
    /// profiler's own allocation wrappers below the allocating method are dropped; bytes of a type that no backtrace
    /// accounts for (allocated before any managed frame) become a "[native]" sample of that type.
    /// </summary>
    public static TraceModel ReadAllocations(IEnumerable<string> lines)
    {
        var samples = new List<TraceSample>();
        string? type = null;
        long typeBytes = 0, traced = 0;
        List<string>? frames = null;
        long bytes = 0;
        void Flush()
        {
            if (frames is null) return;
            var cut = frames.FindIndex(f => f.StartsWith("(wrapper alloc) ", StringComparison.Ordinal)
                                           || f.StartsWith("(wrapper managed-to-native) object:__icall_wrapper_mono_", StringComparison.Ordinal));
            if (cut >= 0) frames.RemoveRange(cut, frames.Count - cut);
            samples.Add(new TraceSample([.. frames.Count == 0 ? ["[native]"] : frames, "[alloc] " + type], bytes));
            traced += bytes;
            frames = null;
        }
        void EndType()
        {
            Flush();
            if (type is not null && typeBytes > traced) samples.Add(new TraceSample(["[native]", "[alloc] " + type], typeBytes - traced));
            type = null;
        }
        foreach (var line in lines)
        {
            if (line.StartsWith("\t\t", StringComparison.Ordinal)) { frames?.Add(line.Trim()); continue; }
            Flush();
            if (FromLine.Match(line) is { Success: true } from && type is not null)
            {
                frames = [];
                bytes = long.Parse(from.Groups[1].Value, CultureInfo.InvariantCulture);
            }
            else if (TypeLine.Match(line) is { Success: true } t)
            {
                EndType();
                type = t.Groups[4].Value.Trim();
                typeBytes = long.Parse(t.Groups[1].Value, CultureInfo.InvariantCulture);
                traced = 0;
            }
            else EndType();
        }
        EndType();
        return new TraceModel(TraceCapture.Alloc, "bytes", samples, []) { Sampled = false };
    }

    private const string Hit = "sample hit, type: ", Frame = "sample hit bt ";

    /// <summary>
    /// mprof-report --debug lines into samples: "sample hit, type: T at IP for thread TID" starts one, each following
    /// "sample hit bt I: METHOD" is a managed frame, leaf first. A hit without managed frames (an idle or native-only
    /// thread) becomes a one-frame "[native]" sample of its thread.
    /// </summary>
    public static TraceModel Read(IEnumerable<string> lines, string kind)
    {
        var samples = new List<TraceSample>();
        List<string>? frames = null;
        string? thread = null;
        var unknown = 0;
        void Flush()
        {
            if (frames is null) return;
            frames.Reverse();
            samples.Add(new TraceSample(frames.Count == 0 ? ["[native]"] : frames) { Thread = thread });
            frames = null;
        }
        foreach (var line in lines)
        {
            if (line.StartsWith(Hit, StringComparison.Ordinal))
            {
                Flush();
                frames = [];
                var at = line.LastIndexOf(" for thread ", StringComparison.Ordinal);
                thread = at < 0 ? null : "thread " + line[(at + " for thread ".Length)..].Trim();
            }
            else if (frames is not null && line.StartsWith(Frame, StringComparison.Ordinal) && line.IndexOf(": ", Frame.Length, StringComparison.Ordinal) is var colon and > 0)
            {
                var name = line[(colon + 2)..].Trim();
                if (name.StartsWith("unknown method", StringComparison.Ordinal)) unknown++;
                frames.Add(name);
            }
            else Flush();
        }
        Flush();
        var note = unknown > 0 ? $"{unknown} frames named no method (JIT events after the samples)" : null;
        return new TraceModel(kind, "samples", samples, []) { Note = note };
    }
}
