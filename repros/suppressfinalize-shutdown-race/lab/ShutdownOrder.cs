// suppressfinalize-shutdown-race, lab step: what a runtime does at shutdown, in the order it happens.
// The double free needs two things: a busy background thread stopped before it finishes, and finalizers run for
// objects that are still reachable. This program shows both (or neither) without any native memory.
// C# 7 on purpose: the same file builds with Mono's mcs and with the .NET SDK (ShutdownOrder.csproj).
using System;
using System.Runtime.InteropServices;
using System.Text;
using System.Threading;

namespace Corpus.Repros.SuppressFinalizeRace.Lab
{
    static class Log
    {
        [DllImport("libc.so.6", SetLastError = true)]
        static extern IntPtr write(int fd, byte[] buffer, IntPtr count);

        // write(2) straight to fd 1: at shutdown Mono finalizes Console's own stream too, so Console.WriteLine in a
        // finalizer can throw "Stream does not support writing".
        public static void Line(string text)
        {
            byte[] bytes = Encoding.UTF8.GetBytes(text + "\n");
            write(1, bytes, (IntPtr)bytes.Length);
        }
    }

    sealed class Kept
    {
        ~Kept()
        {
            Log.Line("finalizer of a static-field object ran; HasShutdownStarted=" + Environment.HasShutdownStarted);
        }
    }

    static class ShutdownOrder
    {
        // Reachable until the very end: only a shutdown pass that finalizes everything runs its finalizer.
        static Kept kept = new Kept();
        static long spins;

        static int Main()
        {
            var busy = new ManualResetEvent(false);
            var worker = new Thread(() =>
            {
                try
                {
                    busy.Set();
                    while (true) spins++;   // like the disposing task: still working when Main returns
                }
                catch (ThreadAbortException)
                {
                    Log.Line("worker: ThreadAbortException at shutdown; HasShutdownStarted=" + Environment.HasShutdownStarted);
                }
            });
            worker.IsBackground = true;
            worker.Start();
            busy.WaitOne();
            GC.KeepAlive(kept);
            Log.Line("main returns; HasShutdownStarted=" + Environment.HasShutdownStarted);
            return 0;
        }
    }
}
