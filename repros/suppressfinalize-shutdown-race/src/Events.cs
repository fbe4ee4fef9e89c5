// suppressfinalize-shutdown-race: GC.SuppressFinalize after the free lets the shutdown finalizer free twice (Mono/.NET Framework); write-up: docs/labs/suppressfinalize-shutdown-race.md
// Kept to C# 7 syntax on purpose: the same file is compiled by Mono's mcs and by the .NET SDK.
using System;
using System.Runtime.InteropServices;

namespace Corpus.Repros.SuppressFinalizeRace
{
    // Size of the unmanaged block each event owns, as in the write-up.
    public static class EventMemory
    {
        public const int Size = 500;
    }

    // Variant "bug": the write-up's class. Dispose frees first and only then suppresses the
    // finalizer, so a runtime that finalizes reachable objects at shutdown can run ~Event (and
    // free the same block) while another thread is still inside Dispose's free.
    public class Event : IDisposable
    {
        internal IntPtr hGlobal; // unmanaged memory owned by this object

        public Event()
        {
            hGlobal = Native.Alloc(EventMemory.Size);
        }

        ~Event()
        {
            Dispose();
        }

        public IntPtr Memory { get { return hGlobal; } }

        public void Dispose()
        {
            if (hGlobal != IntPtr.Zero) // memory still there?
            {
                Native.Free(hGlobal);       // free it ...
                Finalization.Suppress(this); // ... and only then keep the finalizer from freeing it again
                hGlobal = IntPtr.Zero;
            }
        }
    }

    // Variant "fix-order": the write-up's first fix. The finalizer is suppressed before the free,
    // so once a Dispose has started, the shutdown finalizer skips the object.
    public class SuppressFirstEvent : IDisposable
    {
        internal IntPtr hGlobal;

        public SuppressFirstEvent()
        {
            hGlobal = Native.Alloc(EventMemory.Size);
        }

        ~SuppressFirstEvent()
        {
            Dispose();
        }

        public IntPtr Memory { get { return hGlobal; } }

        public void Dispose()
        {
            if (hGlobal != IntPtr.Zero)
            {
                Finalization.Suppress(this); // keep the finalizer away first ...
                Native.Free(hGlobal);        // ... then free
                hGlobal = IntPtr.Zero;
            }
        }
    }

    // Variant "fix-safehandle": the memory is owned by a SafeHandle. The event class has no
    // finalizer; the handle's release runs at most once because SafeHandle marks itself closed
    // (atomically) before it calls ReleaseHandle, whether from Dispose or from its finalizer.
    public sealed class HGlobalHandle : SafeHandle
    {
        public HGlobalHandle(int size)
            : base(IntPtr.Zero, true)
        {
            SetHandle(Native.Alloc(size));
        }

        public override bool IsInvalid
        {
            get { return handle == IntPtr.Zero; }
        }

        protected override bool ReleaseHandle()
        {
            Native.Free(handle);
            return true;
        }
    }

    public class SafeHandleEvent : IDisposable
    {
        readonly HGlobalHandle memory;

        public SafeHandleEvent()
        {
            memory = new HGlobalHandle(EventMemory.Size);
        }

        public HGlobalHandle Handle { get { return memory; } }

        public void Dispose()
        {
            memory.Dispose();
        }
    }
}
