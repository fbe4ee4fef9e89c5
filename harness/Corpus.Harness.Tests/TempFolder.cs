using System.Runtime.CompilerServices;

namespace Corpus.Harness.Tests;

internal static class TempFolder
{
    /// <summary>
    /// Tests call Program.Main with throwaway corpus roots, and the harness points an unset TMPDIR at its root's
    /// build/tmp: name the temp folder first, so a deleted test root never becomes every later test's temp folder.
    /// </summary>
    [ModuleInitializer]
    internal static void Pin()
    {
        if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TMPDIR")))
            Environment.SetEnvironmentVariable("TMPDIR", Path.GetTempPath());
    }
}
