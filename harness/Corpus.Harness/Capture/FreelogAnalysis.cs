using System.Text.RegularExpressions;

namespace Corpus.Harness.Capture;

public sealed record FreeRecord(long Sequence, int Thread, bool Aborting, IReadOnlyList<string> Frames);

/// <summary>
/// What a crash core says about a double free, read with gdb and harness/native/freelog/freelog.py: the pointer
/// the aborting free() was handed, and every recorded free of it with its thread and managed frames. When glibc
/// aborted on a block freed once, having only then found the damage of an earlier double free, it is that earlier
/// repeated free of the crashing thread instead (<see cref="FreesBeforeAbort"/> of its own frees before the abort).
/// </summary>
public sealed partial record FreelogAnalysis(string? Pointer, int? CrashThread, IReadOnlyList<FreeRecord> Frees, string Text)
{
    /// <summary>Null when the aborting free was the repeated one; else the crashing thread's frees between the
    /// repeated free and the aborting one.</summary>
    public int? FreesBeforeAbort { get; init; }

    /// <summary>gdb on the core; the perf map for JIT names must still be at /tmp/perf-PID.map.</summary>
    public static FreelogAnalysis Run(IToolRunner tools, string executable, string core, string script)
    {
        var r = tools.Run("gdb", ["-q", "-batch", "-nx", "-x", script, executable, core], TimeSpan.FromMinutes(2));
        if (r.TimedOut) throw new InvalidOperationException(r.Describe("gdb"));
        return Parse(r.Stdout);
    }

    public static FreelogAnalysis Parse(string text)
    {
        string? pointer = null;
        int? crashThread = null, before = null;
        var frees = new List<FreeRecord>();
        List<string>? frames = null;
        foreach (var raw in text.Split('\n'))
        {
            var line = raw.TrimEnd();
            if (Crashing().Match(line) is { Success: true } c)
            {
                crashThread = int.Parse(c.Groups[1].Value);
                pointer = c.Groups[2].Value;
            }
            else if (Noticed().Match(line) is { Success: true } later && crashThread == int.Parse(later.Groups[1].Value))
            {
                pointer = later.Groups[2].Value;
                before = int.Parse(later.Groups[3].Value);
                frees = [];
                frames = null;
            }
            else if (Free().Match(line) is { Success: true } f)
            {
                frames = [];
                frees.Add(new FreeRecord(long.Parse(f.Groups[1].Value), int.Parse(f.Groups[2].Value),
                                         f.Groups[3].Success, frames));
            }
            else if (frames is not null && line.StartsWith("      ")) frames.Add(line.Trim());
            else frames = null;
        }
        return new FreelogAnalysis(pointer, crashThread, frees, text) { FreesBeforeAbort = before };
    }

    /// <summary>Null when the facts prove the double free the spec describes, otherwise what is missing.</summary>
    public string? Mismatch(Signatures.DoubleFreeSpec spec)
    {
        if (Pointer is null) return "no thread of the core is inside free(): not a double-free abort";
        if (Frees.Count < 2) return $"only {Frees.Count} recorded free of {Pointer}";
        static bool All(IEnumerable<string> patterns, IReadOnlyList<string> frames) =>
            patterns.All(p => frames.Any(f => Regex.IsMatch(f, p)));
        var aborting = Frees.LastOrDefault(f => f.Aborting);
        if (aborting is null || !All(spec.CrashingFrames, aborting.Frames))
            return $"the aborting free of {Pointer} is not in [{string.Join(", ", spec.CrashingFrames)}]";
        if (OtherFree(spec) is null)
            return $"no other thread freed {Pointer} from [{string.Join(", ", spec.OtherFrames)}]";
        return null;
    }

    /// <summary>
    /// The free by another thread that the double free repeats: the last one before the aborting free whose frames
    /// match. malloc reuses addresses, so earlier frees of the same pointer belong to older blocks.
    /// </summary>
    public FreeRecord? OtherFree(Signatures.DoubleFreeSpec spec) =>
        Frees.LastOrDefault(f => !f.Aborting && f.Thread != CrashThread
                                 && spec.OtherFrames.All(p => f.Frames.Any(x => Regex.IsMatch(x, p))));

    [GeneratedRegex(@"^crashing thread LWP (\d+) aborted in free\((0x[0-9a-f]+)\)")]
    private static partial Regex Crashing();

    [GeneratedRegex(@"^glibc noticed at that free the damage of an earlier one: LWP (\d+) freed (0x[0-9a-f]+) again at #\d+, (\d+) free")]
    private static partial Regex Noticed();

    [GeneratedRegex(@"^  free #(\d+) on LWP (\d+)(  <- the (?:aborting|repeated) free)?")]
    private static partial Regex Free();
}
