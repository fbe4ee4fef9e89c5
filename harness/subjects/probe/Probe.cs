// The probe a user's runtime build must run before any cell does: it touches what a repro needs beyond the runtime's
// own start (the native shim behind file and process calls, the machine config), so an incomplete copy fails here
// with its cause instead of in a cell as a wrong-failure.
using System;
using System.IO;

static class Probe
{
    static int Main()
    {
        var here = File.Exists(typeof(Probe).Assembly.Location);
        var tmp = Path.GetTempPath();
        var pid = System.Diagnostics.Process.GetCurrentProcess().Id;
        Console.WriteLine($"corpus-probe ok {Environment.Version} {here} {Directory.Exists(tmp)} {pid > 0}");
        return 0;
    }
}
