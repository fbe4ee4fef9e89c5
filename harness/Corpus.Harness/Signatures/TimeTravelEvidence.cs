using System.Text.RegularExpressions;
using Corpus.Harness.Capture;
using Corpus.Harness.Containment;
using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <param name="Failure">Why the walk did not show the pattern, in gdb's or the script's own words; null when it did.</param>
/// <param name="Xstate">The xstate shim's line: the kernel's XSAVE size, gdb's, and the writes it completed.</param>
/// <param name="Attempts">Recordings made: a walk that showed nothing, for no reason of the host's, is recorded again.</param>
public sealed record TimeTravelFacts(string Shows, string? Shown, string Output, double Seconds, string Status,
                                     string? Failure = null, string? Xstate = null, int Attempts = 1);

/// <summary>
/// Time travel (the TTD counterpart): after a reproduction, the native program once more under gdb's `record full`,
/// driven by the repro's script; its output must show the capture's pattern.
/// - Shown: the evidence holds.
/// - gdb says this host cannot replay (<see cref="HostCannotReplay"/>): the capture is unavailable here, with gdb's
///   message in the detail; it is not part of the signature, so the verdict rests on the signature's own evidence.
/// - Anything else: recorded again, at most the capture's retakes times; then the capture broke, an error quoting
///   gdb's or the script's last words, never a verdict.
/// </summary>
public sealed class TimeTravelEvidence : IEvidenceCheck
{
    public string Key => "timeTravel";
    public bool InSignature => false;
    public bool Expensive => true;
    public object ReadSpec(Fields f) => throw new NotSupportedException("time travel is read from the case's capture");
    public bool Applies(CaseSpec cs, Subject subject) => cs.TimeTravel is { } tt && tt.Subjects.Contains(subject.Name);

    /// <summary>
    /// gdb's messages for a replay the host itself rules out: the kernel refused a thread's extended state, process
    /// record cannot decode an instruction the host's code paths use, or ptrace is not allowed at all.
    /// </summary>
    public static readonly Regex HostCannotReplay =
        new(@"Couldn't (?:write|get) extended state status|Process record does not support instruction|ptrace: Operation not permitted",
            RegexOptions.CultureInvariant);

    public async Task<EvidenceResult> CheckAsync(EvidenceContext x)
    {
        var tt = x.Case.TimeTravel!;
        RunResult run;
        string stdout;
        string? shown;
        string? failure;
        bool hostCannot;
        var attempt = 0;
        do
        {
            attempt++;
            (run, stdout) = await x.Runs.RecordAsync(tt);
            shown = run.Stdout.Split('\n').FirstOrDefault(l => Regex.IsMatch(l, tt.Shows))?.TrimStart('|', ' ');
            (failure, hostCannot) = shown is null ? Why(run.Stdout, run.Stderr) : (null, false);
        } while (shown is null && !hostCannot && attempt <= tt.Retakes);
        var xstateFile = Path.Combine(Path.GetDirectoryName(stdout)!, Runner.Phases.TimeTravelRun.XstateReportFile);
        var xstate = File.Exists(xstateFile) ? File.ReadAllText(xstateFile).Trim() : null;
        var facts = new TimeTravelFacts(tt.Shows, shown, stdout, Math.Round(run.WallSeconds, 2), run.Status, failure, xstate, attempt);
        var where = Path.GetRelativePath(x.Cell.RecordDir ?? Path.GetDirectoryName(stdout)!, run.StderrFile);
        x.Cell.Record(null, RunFindings.Of(new CaptureRecord("gdb record full", stdout, new FileInfo(stdout).Length, Math.Round(run.WallSeconds, 2), 0, [],
                                            shown is not null ? null : $"gdb ended {run.Status} without /{tt.Shows}/: {failure}") { Run = "time-travel" }));
        if (shown is not null)
            return EvidenceResult.Hold(Key, $"time travel: {shown}", facts, "time travel walked back to it");
        if (hostCannot)
            return new EvidenceResult(Key, EvidenceStatus.Unavailable,
                $"time travel unavailable on this host: {failure} ({where}); the verdict rests on the signature alone")
                { Facts = facts, KeyFigures = ["no time travel on this host"] };
        return EvidenceResult.Broken(Key,
            $"the time-travel walk ({run.Status}, {run.WallSeconds:0.0} s) did not show /{tt.Shows}/"
            + $"{(attempt > 1 ? $" in {attempt} recordings" : "")}: {failure} ({where})", facts);
    }

    /// <summary>
    /// Why a walk showed nothing: a line where gdb says the host cannot replay, else gdb's last error (a Python
    /// traceback ends in "gdb.error: …"), else the script's last "| " line, else gdb's last line on stderr.
    /// </summary>
    public static (string Why, bool HostCannot) Why(string stdout, string stderr)
    {
        var errLines = stderr.Split('\n').Select(l => l.TrimEnd('\r')).Where(l => l.Trim().Length > 0).ToList();
        if (errLines.FirstOrDefault(l => HostCannotReplay.IsMatch(l)) is { } host) return ("gdb: " + GdbMessage(host), true);
        if (errLines.LastOrDefault(l => PythonError.IsMatch(l)) is { } error) return ("gdb: " + GdbMessage(error), false);
        if (stdout.Split('\n').LastOrDefault(l => l.StartsWith("| ", StringComparison.Ordinal)) is { } said)
            return ("the walk's last line: " + said[2..].Trim(), false);
        return errLines.Count > 0 ? ("gdb's last line: " + errLines[^1].Trim(), false) : ("gdb printed nothing", false);
    }

    private static readonly Regex PythonError = new(@"^gdb\.\w*(?:error|Error): ", RegexOptions.CultureInvariant);

    private static string GdbMessage(string line) => PythonError.Replace(line.Trim(), "").TrimEnd('.');
}
