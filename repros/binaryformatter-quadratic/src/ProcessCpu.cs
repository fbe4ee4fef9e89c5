// binaryformatter-quadratic: the CPU time of this process, the sweep's clock; write-up: docs/labs/binaryformatter-quadratic.md
// Kept to C# 7 syntax on purpose: the same file is compiled by Mono's mcs and by the .NET SDK.
using System;
using System.ComponentModel;
using System.Diagnostics;
using System.Runtime.InteropServices;

namespace Corpus.Repros.BinaryFormatterQuadratic
{
    // Wall time counts whatever else the host runs; CPU time counts the deserializer's own work (and its collector's
    // threads). Process.TotalProcessorTime is too coarse for the smallest size on Linux (10 ms ticks), so Linux asks
    // the kernel; on Windows it is GetProcessTimes, and nothing finer in seconds exists there (ticks of 15.6 ms; 10 ms
    // under Wine).
    public static class ProcessCpu
    {
        const int ClockProcessCpuTimeId = 2;

        [StructLayout(LayoutKind.Sequential)]
        struct Timespec
        {
            public long Seconds;
            public long Nanoseconds;
        }

        [DllImport("libc.so.6", EntryPoint = "clock_gettime", SetLastError = true)]
        static extern int ClockGetTime(int clock, out Timespec value);

        public static double Seconds()
        {
            if (Environment.OSVersion.Platform == PlatformID.Win32NT)
                return Process.GetCurrentProcess().TotalProcessorTime.TotalSeconds;
            Timespec now;
            if (ClockGetTime(ClockProcessCpuTimeId, out now) != 0)
                throw new Win32Exception(Marshal.GetLastWin32Error());
            return now.Seconds + now.Nanoseconds / 1e9;
        }
    }
}
