using System.Diagnostics;
using System.Reflection;
using System.Runtime.InteropServices;

namespace Corpus.DumpFacts.Tests;

/// <summary>
/// One heap dump of the debuggee, shared by the tests of a class. The debuggee runs only
/// until the dump is written; the dump is deleted when the tests are done.
/// </summary>
public sealed class DebuggeeDump : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    public string Path { get; }
    public TimeSpan CreatedumpTime { get; }

    public DebuggeeDump()
    {
        // Run the debuggee on the same runtime as the tests, and dump it with that runtime's createdump.
        string runtimeDir = RuntimeEnvironment.GetRuntimeDirectory();
        string muxer = System.IO.Path.GetFullPath(System.IO.Path.Combine(runtimeDir, "../../../dotnet"));
        string createdump = System.IO.Path.Combine(runtimeDir, "createdump");
        string debuggee = typeof(DebuggeeDump).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>()
            .Single(a => a.Key == "DebuggeePath").Value!;

        Path = System.IO.Path.Combine(System.IO.Path.GetTempPath(), $"dumpfacts-test-{Guid.NewGuid():N}.core");
        using var process = Process.Start(new ProcessStartInfo(muxer, [debuggee])
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        })!;
        try
        {
            string ready = process.StandardOutput.ReadLineAsync().WaitAsync(Timeout).GetAwaiter().GetResult()
                ?? throw new InvalidOperationException($"debuggee exited: {process.StandardError.ReadToEnd()}");
            Assert.StartsWith("READY", ready);

            var stopwatch = Stopwatch.StartNew();
            Run(createdump, "--withheap", "-f", Path, process.Id.ToString());
            CreatedumpTime = stopwatch.Elapsed;
        }
        finally
        {
            process.Kill();
            process.WaitForExit();
        }
    }

    private static void Run(string file, params string[] args)
    {
        using var p = Process.Start(new ProcessStartInfo(file, args)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        })!;
        Task<string> stdout = p.StandardOutput.ReadToEndAsync(), stderr = p.StandardError.ReadToEndAsync();
        if (!p.WaitForExit(Timeout))
        {
            p.Kill();
            throw new TimeoutException($"{file} did not finish within {Timeout}");
        }
        if (p.ExitCode != 0)
            throw new InvalidOperationException($"{file} failed ({p.ExitCode}): {stdout.Result}{stderr.Result}");
    }

    public void Dispose() => File.Delete(Path);
}
