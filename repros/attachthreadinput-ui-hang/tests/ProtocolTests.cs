// attachthreadinput-ui-hang: tests of the C# program's logic that needs no window; write-up: docs/labs/attachthreadinput-ui-hang.md
using System;
using System.Collections;
using System.Globalization;
using System.IO;
using System.Text.RegularExpressions;
using Xunit;

namespace Corpus.Repros.AttachThreadInputHang.Tests;

public class ProtocolTests
{
    [Theory]
    [InlineData("bug", Variant.Bug)]
    [InlineData("fix", Variant.Fix)]
    [InlineData("control", Variant.Control)]
    public void EachVariantParses(string arg, Variant v)
    {
        Assert.Equal(new Options(v), Options.Parse([arg]));
        Assert.Equal(new Options(v, ManagedWndProc: true), Options.Parse([arg, "managed-wndproc"]));
    }

    [Theory]
    [InlineData]
    [InlineData("Bug")]
    [InlineData("bug", "20000")]
    [InlineData("bug", "managed-wndproc", "x")]
    public void AnythingElseIsAUsageError(params string[] args) => Assert.Null(Options.Parse(args));

    [Fact]
    public void AWrongInvocationExitsTwoWithTheUsage()
    {
        var err = new StringWriter();
        var old = Console.Error;
        Console.SetError(err);
        try { Assert.Equal(2, Program.Main(["hang"])); }
        finally { Console.SetError(old); }
        Assert.Contains(Options.Usage, err.ToString());
    }

    [Fact]
    public void MarkerLinesCarryAMillisecondStampInAnyCulture()
    {
        var old = CultureInfo.CurrentCulture;
        CultureInfo.CurrentCulture = new CultureInfo("de-DE");  // a decimal comma must not leak into the protocol
        try
        {
            var line = Marker.Line("ui-return", 20007.14, "call=SetFocus");
            Assert.Equal("REPRO-REACHED ui-return t_ms=20007.1 call=SetFocus", line);
            // The shape the harness's hang family reads.
            Assert.Matches(new Regex(@"^REPRO-REACHED (?<event>\S+) t_ms=(?<t>\d+(?:\.\d+)?)(?<rest>[^\r\n]*)$"), line);
            Assert.Equal("REPRO-REACHED worker-exit t_ms=0.0", Marker.Line("worker-exit", 0));
        }
        finally { CultureInfo.CurrentCulture = old; }
    }

    [Fact]
    public void WindowHandlesPrintInHex()
    {
        Assert.Equal("0x2005a", Marker.Hwnd(new IntPtr(0x2005a)));
        Assert.Equal("0x0", Marker.Hwnd(IntPtr.Zero));
    }

    [Fact]
    public void AttachedThreadsShareTheirFocusOrActiveWindow()
    {
        var w = new IntPtr(0x2005a);
        var ui = new InputState(w, w);
        Assert.True(ui.SharedWith(new InputState(w, w)));          // bug: the pool thread sees the UI thread's focus
        Assert.True(ui.SharedWith(new InputState(IntPtr.Zero, w)));
        Assert.False(ui.SharedWith(default));                        // fix, control: the pool thread has no input state
        Assert.False(default(InputState).SharedWith(default));      // two empty states share nothing
    }

    [Theory]
    [InlineData(null, 20000)]
    [InlineData("5000", 5000)]
    [InlineData("", 20000)]
    [InlineData("x", 20000)]
    public void ThePoolTimeoutComesFromTheEnvironment(string? value, int ms)
    {
        var env = new Hashtable();
        if (value is not null) env[PoolTimeout.Variable] = value;
        Assert.Equal(ms, PoolTimeout.Configured(env));
    }
}
