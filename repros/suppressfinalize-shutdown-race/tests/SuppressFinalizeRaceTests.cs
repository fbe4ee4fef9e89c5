// suppressfinalize-shutdown-race: tests for the GC.SuppressFinalize shutdown double-free repro; write-up: docs/labs/suppressfinalize-shutdown-race.md
using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Threading.Tasks;
using Xunit;

namespace Corpus.Repros.SuppressFinalizeRace.Tests
{
    // The seams (Native.Allocator, Finalization.Suppressed) are process-wide: no parallel tests.
    [CollectionDefinition("native seams", DisableParallelization = true)]
    public class NativeSeams { }

    [Collection("native seams")]
    public sealed class SuppressFinalizeRaceTests : IDisposable
    {
        readonly CountingAllocator allocator = new CountingAllocator();
        readonly ShutdownFinalizer shutdown = new ShutdownFinalizer();

        public SuppressFinalizeRaceTests()
        {
            Native.Allocator = allocator;
            Finalization.Suppressed = shutdown.OnSuppressed;
        }

        public void Dispose()
        {
            Native.Allocator = null;
            Finalization.Suppressed = null;
        }

        // Dispose one object; while its Dispose is inside free(), the "shutdown finalizer" gets
        // its turn on the same object, as the finalizer thread does on Mono / .NET Framework.
        int FreesWhenFinalizedInsideFree(IDisposable ev, object finalizable, Func<IntPtr> memory)
        {
            if (finalizable != null) shutdown.Register(finalizable);
            IntPtr p = memory();
            bool once = false;
            allocator.InsideFree = freed =>
            {
                if (once || freed != p) return;
                once = true;
                if (finalizable != null) shutdown.FinalizeIfRegistered(finalizable);
            };
            ev.Dispose();
            allocator.InsideFree = null;
            Assert.True(once, "Dispose never reached free()");
            return allocator.FreeCount(p);
        }

        [Fact]
        public void BugVariantFreesTheSameBlockTwiceWhenTheFinalizerRunsInsideDispose()
        {
            var ev = new Event();
            int frees = FreesWhenFinalizedInsideFree(ev, ev, () => ev.Memory);
            Assert.Equal(1, shutdown.FinalizersRun);
            Assert.Equal(2, frees);
        }

        [Fact]
        public void FixOrderFreesOnceBecauseTheFinalizerIsSuppressedBeforeTheFree()
        {
            var ev = new SuppressFirstEvent();
            int frees = FreesWhenFinalizedInsideFree(ev, ev, () => ev.Memory);
            Assert.Equal(0, shutdown.FinalizersRun);
            Assert.Equal(1, frees);
        }

        [Fact]
        public void FixSafeHandleFreesOnceEvenWhenTheHandlesFinalizerRunsInsideTheRelease()
        {
            var ev = new SafeHandleEvent();
            // The event class has no finalizer; the handle does (SafeHandle's), and it is registered.
            Assert.Throws<InvalidOperationException>(() => ShutdownFinalizer.FindFinalizer(typeof(SafeHandleEvent)));
            int frees = FreesWhenFinalizedInsideFree(ev, ev.Handle, () => ev.Handle.DangerousGetHandle());
            Assert.Equal(1, shutdown.FinalizersRun); // SafeHandle never suppresses before releasing
            Assert.Equal(1, frees);
            Assert.True(ev.Handle.IsClosed);
        }

        [Fact]
        public void BugVariantFreesOnceWhenTheFinalizerOnlyRunsAfterDispose()
        {
            // The window matters: a finalizer that comes after a finished Dispose does nothing.
            var ev = new Event();
            IntPtr p = ev.Memory;
            ev.Dispose();
            ShutdownFinalizer.RunFinalizer(ev);
            Assert.Equal(1, allocator.FreeCount(p));
        }

        public static IEnumerable<object[]> Variants()
        {
            yield return new object[] { "bug" };
            yield return new object[] { "fix-order" };
            yield return new object[] { "fix-safehandle" };
        }

        static Task StartVariant(string variant, int count)
        {
            switch (variant)
            {
                case "bug": return Program.Start(count, () => new Event());
                case "fix-order": return Program.Start(count, () => new SuppressFirstEvent());
                default: return Program.Start(count, () => new SafeHandleEvent());
            }
        }

        [Theory]
        [MemberData(nameof(Variants))]
        public async Task TheWorkerDisposesEveryObjectOnceWhenNothingInterrupts(string variant)
        {
            const int count = 5000;
            await StartVariant(variant, count).WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(count, allocator.Allocations);
            Assert.Equal(new SortedDictionary<int, int> { { 1, count } }, allocator.Histogram());
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void CreateAndDrop(string variant, int count)
        {
            for (int i = 0; i < count; i++)
            {
                switch (variant)
                {
                    case "bug": new Event(); break;
                    case "fix-order": new SuppressFirstEvent(); break;
                    default: new SafeHandleEvent(); break;
                }
            }
        }

        [Theory]
        [MemberData(nameof(Variants))]
        public void TheRealFinalizerFreesAnUndisposedObjectOnce(string variant)
        {
            const int count = 1000;
            CreateAndDrop(variant, count);
            for (int i = 0; i < 3; i++)
            {
                GC.Collect();
                GC.WaitForPendingFinalizers();
            }
            Assert.Equal(count, allocator.Allocations);
            Assert.Equal(new SortedDictionary<int, int> { { 1, count } }, allocator.Histogram());
        }

        static string[] Args(string line)
        {
            return line.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries);
        }

        [Theory]
        [InlineData("bug", "bug", 50000)]
        [InlineData("fix-order 7", "fix-order", 7)]
        [InlineData("fix-safehandle 50000", "fix-safehandle", 50000)]
        public void ParsesVariantAndCount(string line, string variant, int count)
        {
            string v;
            int n;
            Assert.True(Program.TryParse(Args(line), out v, out n));
            Assert.Equal(variant, v);
            Assert.Equal(count, n);
        }

        [Theory]
        [InlineData("")]
        [InlineData("fix")]
        [InlineData("bug 0")]
        [InlineData("bug -5")]
        [InlineData("bug many")]
        [InlineData("bug 10 extra")]
        public void RejectsOtherArguments(string line)
        {
            string v;
            int n;
            Assert.False(Program.TryParse(Args(line), out v, out n));
            var err = new StringWriter();
            Assert.Equal(2, Program.Usage(err));
            Assert.StartsWith("usage:", err.ToString());
        }
    }
}
