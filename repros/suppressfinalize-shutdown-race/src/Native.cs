// suppressfinalize-shutdown-race: GC.SuppressFinalize after the free lets the shutdown finalizer free twice (Mono/.NET Framework); write-up: docs/labs/suppressfinalize-shutdown-race.md
// Kept to C# 7 syntax on purpose: the same file is compiled by Mono's mcs and by the .NET SDK.
using System;
using System.Runtime.InteropServices;

namespace Corpus.Repros.SuppressFinalizeRace
{
    // Stand-in for an allocator the tests can install. The program never installs one, so there
    // every call is plain Marshal.AllocHGlobal / Marshal.FreeHGlobal (malloc / free on Linux).
    public interface INativeAllocator
    {
        IntPtr Alloc(int size);
        void Free(IntPtr p);
    }

    // The one place the event classes allocate and free their unmanaged memory.
    public static class Native
    {
        // Test seam only; null in the program.
        public static INativeAllocator Allocator;

        public static IntPtr Alloc(int size)
        {
            INativeAllocator a = Allocator;
            return a == null ? Marshal.AllocHGlobal(size) : a.Alloc(size);
        }

        public static void Free(IntPtr p)
        {
            INativeAllocator a = Allocator;
            if (a == null)
            {
                Marshal.FreeHGlobal(p);
            }
            else
            {
                a.Free(p);
            }
        }
    }

    // GC.SuppressFinalize plus a notification the tests use to know, at any instant, whether the
    // runtime would still run an object's finalizer. The program never installs an observer.
    public static class Finalization
    {
        public static Action<object> Suppressed;

        public static void Suppress(object o)
        {
            GC.SuppressFinalize(o);
            Action<object> observer = Suppressed;
            if (observer != null)
            {
                observer(o);
            }
        }
    }
}
