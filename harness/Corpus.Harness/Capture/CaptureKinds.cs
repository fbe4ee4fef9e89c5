using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture;

/// <summary>capture.timed: procdump -s/-n semantics, beside the family's runs (<see cref="Runner.Phases.TimedCaptures"/>).</summary>
public sealed class TimedCaptureKind : ICaptureKind
{
    public string Key => "timed";
    public object ReadSpec(Fields f, string repoDir) => TimedCapture.Read(f);

    public void Validate(CaseSpec cs, Fields c, CaptureCheck x)
    {
        var t = cs.Timed!;
        if (t.Heap && !cs.Subjects.Any(s => x.Kinds.Capabilities(s).HasFlag(SubjectCapabilities.HeapFacts)))
            throw c.Error($"none of the case's subjects ({string.Join(", ", cs.Subjects)}) gives heap statistics "
                          + $"(subjects that do: {x.Kinds.Having(SubjectCapabilities.HeapFacts)})", "capture.timed.heap");
        if (t.DelaySec >= cs.Budget.TimeoutSec)
            throw c.Error($"a capture {t.DelaySec} s after the marker must be shorter than the run's budget.timeoutSec ({cs.Budget.TimeoutSec} s)",
                          "capture.timed.delaySec");
    }
}

/// <summary>capture.crash: procdump -e semantics through the kernel's core (<see cref="Runner.Phases.LinuxRuns"/>).</summary>
public sealed class CrashCaptureKind : ICaptureKind
{
    public string Key => "crash";
    public object ReadSpec(Fields f, string repoDir) => CrashCapture.Read(f);
}

/// <summary>capture.timeTravel: gdb's record full of a native program, walked by the time-travel evidence.</summary>
public sealed class TimeTravelCaptureKind : ICaptureKind
{
    public string Key => "timeTravel";
    public object ReadSpec(Fields f, string repoDir) => TimeTravelCapture.Read(f, repoDir);

    public void Validate(CaseSpec cs, Fields c, CaptureCheck x)
    {
        if (cs.TimeTravel!.Subjects.FirstOrDefault(s => !cs.Subjects.Contains(s)) is { } notHere)
            throw c.Error($"'{notHere}' is not one of the case's subjects ({string.Join(", ", cs.Subjects)})", "capture.timeTravel.subjects");
        if (cs.CmakeTarget is null)
            throw c.Error("time travel records a native program: the case needs 'program': 'cmake:TARGET'", "capture.timeTravel");
    }
}

/// <summary>capture.trace: one more run of the cell on the subject's trace backend, after the verdict (<see cref="Runner.Phases.TracedRun"/>).</summary>
public sealed class TraceCaptureKind : ICaptureKind
{
    public string Key => "trace";
    public object ReadSpec(Fields f, string repoDir) => TraceCapture.Read(f);

    /// <summary>The trace's subjects are the case's, each has a backend for its kind, a sweep names the traced size,
    /// and every analyser it names is registered.</summary>
    public void Validate(CaseSpec cs, Fields c, CaptureCheck x)
    {
        var trace = cs.Trace!;
        for (var i = 0; i < trace.Analysers.Count; i++)
            if (x.Families.Analysers.All(a => a.Key != trace.Analysers[i]))
                throw c.Error($"'{trace.Analysers[i]}' is no registered trace analyser ({string.Join(", ", x.Families.Analysers.Select(a => a.Key))})",
                              $"capture.trace.analysers[{i}]");
        for (var i = 0; i < trace.Subjects.Count; i++)
            if (!cs.Subjects.Contains(trace.Subjects[i]))
                throw c.Error($"'{trace.Subjects[i]}' is not one of the case's subjects ({string.Join(", ", cs.Subjects)})", $"capture.trace.subjects[{i}]");
        foreach (var s in cs.Subjects.Where(trace.Traces))
            if (x.Kinds.Owner(s)?.TraceUnsupported(s, trace) is { } why)
                throw c.Error($"{s} cannot be traced this way: {why} (list the subjects to trace in 'capture.trace.subjects')", "capture.trace.kind");
        if (x.Family.SweepsSizes && trace.Size is null && !trace.SizeIsLargestFinished)
            throw c.Error($"a '{x.Family.Key}' case sweeps sizes: name the size of the traced run", "capture.trace.size");
        if (!x.Family.SweepsSizes && (trace.Size is not null || trace.SizeIsLargestFinished))
            throw c.Error($"'{{n}}' is replaced only in a sweep over sizes; this case's '{x.Family.Key}' signature runs none", "capture.trace.size");
    }

    /// <summary>The traced run, after the verdict, so no measured run is slowed by the tool.</summary>
    public async Task AfterVerdictAsync(CaptureAfter x)
    {
        var trace = x.Case.Trace!;
        if (!trace.Traces(x.Subject.Name)) return;
        var n = trace.Size;
        if (trace.SizeIsLargestFinished)
            n = x.Cell.RunsNow().Where(r => !r.CaptureOnly && r.N is not null && r.ExitedZero).Select(r => r.N).Max();
        if (trace.SizeIsLargestFinished && n is null)
            x.Cell.Record(null, Runner.RunFindings.Error($"trace: no size of the sweep finished, so none could be traced ('capture.trace.size': '{TraceCapture.LargestFinished}')"));
        else
        {
            // A traced run that could not be taken or read (the tool lost its connection, the host dropped its records)
            // says nothing about the bug: it is taken again, at most the capture's retakes times.
            for (var attempt = 1; attempt <= 1 + trace.Retakes; attempt++)
                if (await x.Runs.TraceAsync(trace, n, attempt) is not { Error: not null }) break;
        }
    }
}
