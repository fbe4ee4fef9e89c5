using System.Diagnostics;
using System.Reflection;

namespace Corpus.LostMemory.Tests;

/// <summary>The Holder program running as a child; disposing closes its stdin and waits for it.</summary>
internal sealed class HolderProcess : IDisposable
{
    public Process Process { get; }

    public string ReadyLine { get; }

    public int Pid => Process.Id;

    private HolderProcess(Process process, string ready)
    {
        Process = process;
        ReadyLine = ready;
    }

    public static string HolderPath =>
        typeof(HolderProcess).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "HolderPath").Value!;

    public static HolderProcess Start(params string[] args)
    {
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        psi.ArgumentList.Add("exec");
        psi.ArgumentList.Add(HolderPath);
        foreach (string a in args)
            psi.ArgumentList.Add(a);
        var p = Process.Start(psi) ?? throw new InvalidOperationException("could not start the holder");
        var read = p.StandardOutput.ReadLineAsync();
        if (!read.Wait(TimeSpan.FromSeconds(60)) || read.Result is not { } line || !line.StartsWith("READY", StringComparison.Ordinal))
        {
            p.Kill();
            throw new InvalidOperationException("holder did not get ready: " + p.StandardError.ReadToEnd());
        }
        return new HolderProcess(p, line);
    }

    public void Dispose()
    {
        try
        {
            Process.StandardInput.Close();
            if (!Process.WaitForExit(10_000))
                Process.Kill();
        }
        finally
        {
            Process.Dispose();
        }
    }
}
