using System.Diagnostics;
using System.Text.RegularExpressions;
using Corpus.Harness.Containment;

namespace Corpus.Harness.Capture;

/// <summary>
/// Mono prints every thread's managed stack to stdout on SIGQUIT ("Full thread dump:"). This is the cheapest
/// stack snapshot with managed frame names that Mono offers on Linux.
/// </summary>
public sealed partial class MonoThreadDump : ICaptureBackend
{
    public const string Header = "Full thread dump:";
    public string Name => "mono-sigquit";
    public string? Unavailable => IHost.Current.UnixSignals ? null : "SIGQUIT thread dumps need a Unix Mono";

    public async Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
    {
        var lines = new List<string>();
        var started = false;
        var last = Stopwatch.StartNew();
        void OnLine(string line, bool stderr, double t)
        {
            if (stderr) return;
            lock (lines)
            {
                // Mono ends a dump without a newline, so the next output (even the next dump) is glued to it.
                var at = line.IndexOf(Header, StringComparison.Ordinal);
                if (!started)
                {
                    if (at < 0) return;
                    started = true;
                    line = line[at..];
                }
                else if (!IsDumpLine(line)) return;
                lines.Add(line);
                last.Restart();
            }
        }
        target.Line += OnLine;
        var at = target.Elapsed;
        var clock = Stopwatch.StartNew();
        try
        {
            target.Signal(Native.SIGQUIT);
            // The dump arrives as a burst of lines; it is complete once the burst has been quiet a while.
            while (clock.Elapsed < TimeSpan.FromSeconds(10) && !target.HasExited && !cancel.IsCancellationRequested)
            {
                await Task.Delay(50, CancellationToken.None);
                lock (lines) if (started && last.ElapsedMilliseconds > 300) break;
            }
        }
        finally { target.Line -= OnLine; }
        string[] text;
        lock (lines) text = [.. lines];
        var file = Path.Combine(dir, $"snapshot-{index}.txt");
        File.WriteAllLines(file, text);
        var seconds = Math.Round(clock.Elapsed.TotalSeconds - (started ? last.Elapsed.TotalSeconds : 0), 3);
        return new CaptureRecord(Name, file, new FileInfo(file).Length, seconds, Math.Round(at, 3), Parse(text),
                                 started ? null : "no thread dump arrived (did the process exit?)");
    }

    private static bool IsDumpLine(string line) => line.Length == 0 || line.StartsWith('"') || line.StartsWith("  at ");

    /// <summary>Threads and their frames, top first, with IL offsets and assembly ids removed.</summary>
    public static IReadOnlyList<ThreadStack> Parse(IEnumerable<string> dump)
    {
        var threads = new List<ThreadStack>();
        string? name = null;
        var frames = new List<string>();
        void Flush()
        {
            if (name is not null) threads.Add(new ThreadStack(name, [.. frames]));
            frames.Clear();
        }
        foreach (var line in dump)
        {
            if (line.StartsWith('"'))
            {
                Flush();
                var close = line.IndexOf('"', 1);
                name = close > 0 ? line[1..close] : line.Trim('"');
                continue;
            }
            if (name is null || !line.StartsWith("  at ")) continue;
            var frame = FrameSuffix().Replace(line[5..], "").Trim();
            if (frame != "<unknown> <0xffffffff>") frames.Add(frame);
        }
        Flush();
        return threads;
    }

    [GeneratedRegex(@"\s*(\[0x[0-9a-f]+\]|<0x[0-9a-f]+( \+ 0x[0-9a-f]+)?>)( in .*)?$")]
    private static partial Regex FrameSuffix();
}
