using System.Globalization;
using Corpus.Harness.Containment;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture.Traces;

/// <summary>
/// Mono's trace backend: the log profiler in sample mode (`--profile=log:nodefaults,sample=HZ,maxframes=64,output=F`),
/// read back with `mprof-report --debug`, whose decoding lists every sample hit with its managed frames (leaf first).
/// mprof-report's own sample report keeps only the leaf method, which cannot say what a sample was under.
/// </summary>
public sealed class MonoLogProfilerBackend : ITraceBackend
{
    public const int DefaultHz = 1000, MaxFrames = 64;
    public string Name => "mono-log-profiler";

    public string? Unavailable => SubjectKinds.Which("mprof-report") is null ? "mprof-report is not installed (Debian's mono-utils, part of mono-complete; make setup installs it)" : null;

    public Launch Wrap(Launch launch, TraceRun run)
    {
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
