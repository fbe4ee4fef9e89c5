// suppressfinalize-shutdown-race: test helpers for the GC.SuppressFinalize shutdown double-free repro; write-up: docs/labs/suppressfinalize-shutdown-race.md
using System;
using System.Collections.Generic;
using System.Reflection;
using System.Runtime.InteropServices;

namespace Corpus.Repros.SuppressFinalizeRace.Tests
{
    // Hands out real blocks (Marshal.AllocHGlobal) and counts every Free call per block. It never
    // releases a block itself, so a second Free is counted instead of corrupting the heap.
    public sealed class CountingAllocator : INativeAllocator
    {
        readonly object gate = new object();
        readonly Dictionary<IntPtr, int> frees = new Dictionary<IntPtr, int>();

        // Called inside Free, before it returns: the instant another thread would see the block
        // already freed while the caller's Dispose has not finished.
        public Action<IntPtr> InsideFree;

        public IntPtr Alloc(int size)
        {
            IntPtr p = Marshal.AllocHGlobal(size);
            lock (gate)
            {
                frees.Add(p, 0);
            }
            return p;
        }

        public void Free(IntPtr p)
        {
            lock (gate)
            {
                int n;
                if (!frees.TryGetValue(p, out n))
                {
                    return; // a block of another test's allocator, finalized late: not ours to count
                }
                frees[p] = n + 1;
            }
            Action<IntPtr> inside = InsideFree;
            if (inside != null)
            {
                inside(p);
            }
        }

        public int FreeCount(IntPtr p)
        {
            lock (gate)
            {
                return frees[p];
            }
        }

        public int Allocations
        {
            get { lock (gate) { return frees.Count; } }
        }

        // Blocks freed n times, keyed by n.
        public SortedDictionary<int, int> Histogram()
        {
            var h = new SortedDictionary<int, int>();
            lock (gate)
            {
                foreach (int n in frees.Values)
                {
                    int c;
                    h.TryGetValue(n, out c);
                    h[n] = c + 1;
                }
            }
            return h;
        }
    }

    // What .NET Framework and Mono do at shutdown, cut down to one object: run the finalizer of an
    // object that is still registered for finalization, reachable or not. Registration ends when
    // the object calls GC.SuppressFinalize (reported through Finalization.Suppressed).
    public sealed class ShutdownFinalizer
    {
        readonly HashSet<object> registered = new HashSet<object>(ReferenceEqualityComparer.Instance);
        public int FinalizersRun;

        public void Register(object o)
        {
            lock (registered) registered.Add(o);
        }

        public void OnSuppressed(object o)
        {
            lock (registered) registered.Remove(o);
        }

        public void FinalizeIfRegistered(object o)
        {
            lock (registered)
            {
                if (!registered.Remove(o)) return;
            }
            FinalizersRun++;
            RunFinalizer(o);
        }

        // Calls the object's real finalizer (the compiled ~T, i.e. its Finalize override).
        public static void RunFinalizer(object o)
        {
            MethodInfo finalize = FindFinalizer(o.GetType());
            try
            {
                finalize.Invoke(o, null);
            }
            catch (TargetInvocationException e)
            {
                throw e.InnerException;
            }
        }

        public static MethodInfo FindFinalizer(Type t)
        {
            for (; t != typeof(object); t = t.BaseType)
            {
                MethodInfo m = t.GetMethod("Finalize", BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.DeclaredOnly);
                if (m != null) return m;
            }
            throw new InvalidOperationException("no finalizer");
        }
    }
}
