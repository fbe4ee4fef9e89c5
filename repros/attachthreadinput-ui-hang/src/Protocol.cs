// attachthreadinput-ui-hang: the program's logic that needs no window (tested by tests/, on any OS).
using System;
using System.Collections;
using System.Globalization;

namespace Corpus.Repros.AttachThreadInputHang;

public enum Variant { Bug, Fix, Control }

/// <summary>AttachThreadInputHang &lt;bug|fix|control&gt; [managed-wndproc]</summary>
/// <param name="ManagedWndProc">The second window's class gets a managed window procedure (the pitfall), not user32's.</param>
public sealed record Options(Variant Variant, bool ManagedWndProc = false)
{
    public const string Usage = "usage: AttachThreadInputHang <bug|fix|control> [managed-wndproc]";

    public static Options? Parse(string[] args)
    {
        if (args.Length is < 1 or > 2 || (args.Length == 2 && args[1] != "managed-wndproc")) return null;
        Variant? v = args[0] switch { "bug" => Variant.Bug, "fix" => Variant.Fix, "control" => Variant.Control, _ => null };
        return v is null ? null : new Options(v.Value, args.Length == 2);
    }
}

/// <summary>
/// The marker lines the harness reads: REPRO-REACHED &lt;event&gt; t_ms=&lt;ms since start&gt; [key=value …]. The program
/// prints what it saw and when; the harness decides what it means.
/// </summary>
public static class Marker
{
    public static string Line(string evt, double tMs, string rest = "") =>
        string.Create(CultureInfo.InvariantCulture, $"REPRO-REACHED {evt} t_ms={tMs:0.0}{(rest.Length > 0 ? " " + rest : "")}");

    public static string Hwnd(IntPtr h) => "0x" + h.ToString("x", CultureInfo.InvariantCulture);
}

/// <summary>What GetGUIThreadInfo says of one thread's input state.</summary>
public readonly record struct InputState(IntPtr Focus, IntPtr Active)
{
    /// <summary>Attached queues share one input state: both threads report the same non-null focus or active window.</summary>
    public bool SharedWith(InputState other) =>
        (Focus != IntPtr.Zero && Focus == other.Focus) || (Active != IntPtr.Zero && Active == other.Active);
}

/// <summary>How long the .NET thread pool keeps an idle worker before it retires it.</summary>
public static class PoolTimeout
{
    public const string Variable = "DOTNET_ThreadPool_ThreadTimeoutMs";
    public const int DefaultMs = 20_000;

    /// <summary>The configured value. The runtime reads this one as decimal: 5000 moved the hang to 5.0 s under Wine.</summary>
    public static int Configured(IDictionary env) =>
        env[Variable] is string s && int.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out var ms) ? ms : DefaultMs;
}
