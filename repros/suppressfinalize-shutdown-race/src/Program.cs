// suppressfinalize-shutdown-race: GC.SuppressFinalize after the free lets the shutdown finalizer free twice (Mono/.NET Framework); write-up: docs/labs/suppressfinalize-shutdown-race.md
// Kept to C# 7 syntax on purpose: the same file is compiled by Mono's mcs and by the .NET SDK.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace Corpus.Repros.SuppressFinalizeRace
{
    public static class Program
    {
        public const int DefaultCount = 50 * 1000;

        public static int Main(string[] args)
        {
            // Protocol lines must reach the harness as soon as they are printed: a crash can follow.
            StreamWriter stdout = new StreamWriter(Console.OpenStandardOutput());
            stdout.AutoFlush = true;
            Console.SetOut(stdout);
            StreamWriter stderr = new StreamWriter(Console.OpenStandardError());
            stderr.AutoFlush = true;
            Console.SetError(stderr);

            string variant;
            int count;
            if (!TryParse(args, out variant, out count))
            {
                return Usage(Console.Error);
            }

            switch (variant)
            {
                case "bug":
                    Start(count, () => new Event());
                    break;
                case "fix-order":
                    Start(count, () => new SuppressFirstEvent());
                    break;
                default: // "fix-safehandle"
                    Start(count, () => new SafeHandleEvent());
                    break;
            }

            // Main returns while the worker may still be disposing: the runtime shuts down now.
            Console.Out.WriteLine("REPRO-REACHED main-returning");
            Console.Out.WriteLine("REPRO-DONE");
            return 0;
        }

        public static readonly string[] Variants = { "bug", "fix-order", "fix-safehandle" };

        public static bool TryParse(string[] args, out string variant, out int count)
        {
            variant = null;
            count = DefaultCount;
            if (args == null || args.Length < 1 || args.Length > 2 || Array.IndexOf(Variants, args[0]) < 0)
            {
                return false;
            }
            if (args.Length == 2
                && (!int.TryParse(args[1], NumberStyles.None, CultureInfo.InvariantCulture, out count) || count < 1))
            {
                return false;
            }
            variant = args[0];
            return true;
        }

        public static int Usage(TextWriter error)
        {
            error.WriteLine("usage: SuppressFinalizeRace <variant> [count]");
            error.WriteLine("  variant: bug             free, then GC.SuppressFinalize (the write-up's code)");
            error.WriteLine("           fix-order       GC.SuppressFinalize, then free");
            error.WriteLine("           fix-safehandle  memory owned by a SafeHandle, no finalizer on the class");
            error.WriteLine("  count:   number of objects, a positive integer (default " + DefaultCount + ")");
            return 2;
        }

        // The write-up's Main: create the objects, start a task that disposes them one by one once
        // it is signalled, signal it, wait a millisecond and leave; then, unlike the write-up, wait until
        // the worker is a tenth of the way through. Returns the task for the tests; Main does not wait for it.
        public static Task Start<T>(int count, Func<T> create) where T : IDisposable
        {
            List<T> events = Enumerable.Range(1, count)
                                       .Select(x => create())
                                       .ToList();

            ManualResetEvent startEvent = new ManualResetEvent(false);
            int disposed = 0;

            Task worker = Task.Factory.StartNew(() =>
            {
                startEvent.WaitOne(); // wait for the signal
                foreach (T ev in events) // dispose the events
                {
                    ev.Dispose();
                    Volatile.Write(ref disposed, disposed + 1);
                }
            });

            startEvent.Set(); // start disposing
            Thread.Sleep(1);  // wait a bit, then exit
            // The race needs shutdown to meet the worker inside its loop. On a quiet machine 1 ms got it thousands of
            // objects in; on a busy one, a few, and the bug's rate fell with the host's load (2-16 %, 0.5 % beside two
            // busy loops). Waiting for a tenth of the list makes the meeting certain: 76 % beside them.
            while (Volatile.Read(ref disposed) < count / 10 && !worker.IsCompleted) Thread.Yield();
            return worker;
        }
    }
}
