// filemapping-leak: page-file-backed shared memory that is unmapped but whose map is never disposed belongs to no process ("The Mysterious Lost Memory Which Belongs To No Process"); write-up: docs/labs/filemapping-leak.md
// Kept to C# 7 syntax on purpose: the same file is compiled by Mono's mcs (-unsafe) and by the .NET SDK.
//
// usage: FileMappingLeak <bug|fix> <count> <sizeMB> [holdSec]
// For each of <count> maps: MemoryMappedFile.CreateNew(null, size) (CreateFileMapping on the page file on
// Windows; shm_open+shm_unlink on .NET 8 and memfd_create on .NET 9+ on Linux), CreateViewAccessor (MapViewOfFile
// / mmap), fill with incompressible data, dispose the view (UnmapViewOfFile / munmap). bug keeps the map alive in
// a static list, fix disposes it as well.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.IO.MemoryMappedFiles;
using System.Threading;

namespace Corpus.Repros.FileMappingLeak
{
    public static class Program
    {
        // The leak's root: a heap dump of the bug variant shows <count> MemoryMappedFile instances held from here.
        public static readonly List<MemoryMappedFile> Mappings = new List<MemoryMappedFile>();

        public static int Main(string[] args)
        {
            // Protocol lines must reach the harness as soon as they are printed.
            StreamWriter stdout = new StreamWriter(Console.OpenStandardOutput());
            stdout.AutoFlush = true;
            Console.SetOut(stdout);
            StreamWriter stderr = new StreamWriter(Console.OpenStandardError());
            stderr.AutoFlush = true;
            Console.SetError(stderr);
            return Run(args, Console.Out, Console.Error);
        }

        public static int Run(string[] args, TextWriter output, TextWriter error)
        {
            int count, sizeMb, holdSec = 0;
            if (args.Length < 3 || args.Length > 4 || (args[0] != "bug" && args[0] != "fix")
                || !int.TryParse(args[1], NumberStyles.None, CultureInfo.InvariantCulture, out count)
                || !int.TryParse(args[2], NumberStyles.None, CultureInfo.InvariantCulture, out sizeMb) || sizeMb < 1
                || (args.Length == 4 && !int.TryParse(args[3], NumberStyles.None, CultureInfo.InvariantCulture, out holdSec)))
            {
                error.WriteLine("usage: FileMappingLeak <bug|fix> <count> <sizeMB> [holdSec]");
                return 2;
            }
            bool fix = args[0] == "fix";
            long size = (long)sizeMb << 20;

            for (int i = 1; i <= count; i++)
            {
                MemoryMappedFile map = MemoryMappedFile.CreateNew(null, size);
                using (MemoryMappedViewAccessor view = map.CreateViewAccessor())
                {
                    Fill(view, size, (ulong)i);
                } // the view is unmapped here: the pages leave the process's working set
                if (fix)
                    map.Dispose();   // the object goes and so do its pages
                else
                    Mappings.Add(map); // the object, and every page of it, stays
            }

            // Collect first, so a heap dump taken at the marker counts only maps something still holds.
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            long held = Mappings.Count;
            long bytes = held * size;
            output.WriteLine("REPRO-REACHED leaked count=" + held.ToString(CultureInfo.InvariantCulture)
                + " bytes=" + bytes.ToString(CultureInfo.InvariantCulture));
            output.Flush();
            if (holdSec > 0)
                Thread.Sleep(TimeSpan.FromSeconds(holdSec));

            output.WriteLine("METRIC {\"count\":" + held.ToString(CultureInfo.InvariantCulture)
                + ",\"bytes\":" + bytes.ToString(CultureInfo.InvariantCulture)
                + ",\"rss_kb\":" + ProcKb("/proc/self/status", "VmRSS").ToString(CultureInfo.InvariantCulture)
                + ",\"created\":" + count.ToString(CultureInfo.InvariantCulture)
                + ",\"shmem_kb\":" + ProcKb("/proc/meminfo", "Shmem").ToString(CultureInfo.InvariantCulture) + "}");
            output.WriteLine("REPRO-DONE");
            output.Flush();
            GC.KeepAlive(Mappings);
            return 0;
        }

        // xorshift64 through the raw view pointer: incompressible, so Windows memory compression and zswap
        // cannot hide the cost, and fast enough for gigabytes.
        private static unsafe void Fill(MemoryMappedViewAccessor view, long size, ulong seed)
        {
            byte* ptr = null;
            view.SafeMemoryMappedViewHandle.AcquirePointer(ref ptr);
            try
            {
                ulong* p = (ulong*)(ptr + view.PointerOffset);
                long n = size / 8;
                ulong x = 0x243F6A8885A308D3UL + seed;
                for (long i = 0; i < n; i++)
                {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    p[i] = x;
                }
            }
            finally
            {
                view.SafeMemoryMappedViewHandle.ReleasePointer();
            }
        }

        // "Key:   123 kB" from /proc/meminfo or /proc/self/status; -1 where there is no /proc (Windows).
        public static long ProcKb(string file, string key)
        {
            try
            {
                foreach (string line in File.ReadAllLines(file))
                {
                    if (line.Length > key.Length && line.StartsWith(key, StringComparison.Ordinal) && line[key.Length] == ':')
                    {
                        string rest = line.Substring(key.Length + 1).Trim();
                        int space = rest.IndexOf(' ');
                        if (space > 0)
                            rest = rest.Substring(0, space);
                        long v;
                        if (long.TryParse(rest, NumberStyles.None, CultureInfo.InvariantCulture, out v))
                            return v;
                    }
                }
            }
            catch (IOException)
            {
            }
            catch (UnauthorizedAccessException)
            {
            }
            return -1;
        }
    }
}
