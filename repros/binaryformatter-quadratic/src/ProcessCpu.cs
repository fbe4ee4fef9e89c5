// binaryformatter-quadratic: the CPU time of this process, the sweep's clock; write-up: docs/labs/binaryformatter-quadratic.md
// Kept to C# 7 syntax on purpose: the same file is compiled by Mono's mcs and by the .NET SDK.
using System;
using System.ComponentModel;
using System.Runtime.InteropServices;

namespace Corpus.Repros.BinaryFormatterQuadratic
{
    // Wall time counts whatever else the host runs; CPU time counts the deserializer's own work (and its collector's
    // threads). Process.TotalProcessorTime is too coarse for the smallest size: 10 ms ticks on Linux. Windows has
    // nothing finer in seconds than GetProcessTimes, which counts clock ticks too (15.6 ms; 10 ms under Wine).
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

        [DllImport("kernel32.dll")]
        static extern IntPtr GetCurrentProcess();

        [DllImport("kernel32.dll", SetLastError = true)]
        static extern bool GetProcessTimes(IntPtr process, out long creation, out long exit, out long kernel, out long user);

        public static double Seconds()
        {
            if (Environment.OSVersion.Platform == PlatformID.Win32NT)
            {
                long creation, exit, kernel, user;
                if (!GetProcessTimes(GetCurrentProcess(), out creation, out exit, out kernel, out user))
                    throw new Win32Exception(Marshal.GetLastWin32Error());
                return (kernel + user) / 1e7;   // 100 ns units
            }
            Timespec now;
            if (ClockGetTime(ClockProcessCpuTimeId, out now) != 0)
                throw new Win32Exception(Marshal.GetLastWin32Error());
            return now.Seconds + now.Nanoseconds / 1e9;
        }
    }
}
