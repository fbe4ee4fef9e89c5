// lost-memory finder: shmem-backed objects (memfd, /dev/shm, SysV, shared anonymous, Wine sections) per process, mapped or held
// only by a descriptor, set against Shmem in /proc/meminfo. For filemapping-leak (docs/labs/filemapping-leak.md).
using System.Globalization;

namespace Corpus.LostMemory;

public static class Program
{
    private const string Usage = """
        usage: LostMemory [--json] [--pid P] [--min-kb K] [--objects] [--include-self]
          Lists, per process, the shm and memfd objects and Wine sections (tmpmap files) it holds (deleted or not),
          how much of them it maps and how much it holds only through a descriptor, which other processes hold
          them, and the system's Shmem against all of it.
          --json          machine-readable report
          --pid P         only process P
          --min-kb K      leave out processes whose objects have less than K KiB allocated
          --objects       list every object under its process (table form)
          --include-self  include this scanner's own process
        """;

    public static int Main(string[] args)
    {
        bool json = false, objects = false;
        var options = new ScanOptions();
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--json":
                    json = true;
                    break;
                case "--objects":
                case "-v":
                    objects = true;
                    break;
                case "--include-self":
                    options = options with { IncludeSelf = true };
                    break;
                case "--pid" when i + 1 < args.Length && int.TryParse(args[i + 1], NumberStyles.None, CultureInfo.InvariantCulture, out int pid):
                    options = options with { Pid = pid };
                    i++;
                    break;
                case "--min-kb" when i + 1 < args.Length && long.TryParse(args[i + 1], NumberStyles.None, CultureInfo.InvariantCulture, out long kb):
                    options = options with { MinKb = kb };
                    i++;
                    break;
                case "-h":
                case "--help":
                    Console.WriteLine(Usage);
                    return 0;
                default:
                    Console.Error.WriteLine(Usage);
                    return 2;
            }
        }

        if (options.Pid is int p && !Directory.Exists(Path.Combine(options.ProcRoot, p.ToString(CultureInfo.InvariantCulture))))
        {
            Console.Error.WriteLine($"LostMemory: no process {p}");
            return 1;
        }
        var report = Scanner.Scan(options);
        Console.Write(json ? Render.Json(report) + Environment.NewLine : Render.Table(report, objects));
        return 0;
    }
}
