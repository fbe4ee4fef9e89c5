namespace Corpus.Harness.Containment;

/// <summary>A full disk stops a run with no verdict (exit 3, RunExit.DiskFull): every later cell would fail to write its
/// records too, and a program whose output cannot be kept is killed.</summary>
public static class Disk
{
    /// <summary>Whether an I/O error is a full disk: ENOSPC (28) on Unix, where .NET's HResult is the errno;
    /// ERROR_DISK_FULL or ERROR_HANDLE_DISK_FULL as HRESULTs (0x8007xxxx) on Windows.</summary>
    public static bool IsFull(Exception e) =>
        e is IOException { HResult: 28 or unchecked((int)0x80070070) or unchecked((int)0x80070027) };
}
