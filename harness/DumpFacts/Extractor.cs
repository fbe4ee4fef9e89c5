using System.Diagnostics;
using System.Text.RegularExpressions;
using Microsoft.Diagnostics.Runtime;

namespace Corpus.DumpFacts;

public static class Extractor
{
    // Unwinding a corrupt stack can loop forever; no real stack in the corpus is this deep.
    private const int MaxFrames = 2000;

    public static Facts Extract(string dumpPath, Options options)
    {
        // ClrMD makes its symbol cache folder when it opens a dump, even with no symbol path; left to itself that is
        // an empty `symbols/` in the temp folder of whoever ran the tool. This one is private and goes with the run.
        DirectoryInfo cache = Directory.CreateTempSubdirectory("dumpfacts-symbols-");
        try
        {
            return Extract(dumpPath, options, cache.FullName);
        }
        finally
        {
            try { cache.Delete(recursive: true); } catch (IOException) { } catch (UnauthorizedAccessException) { }
        }
    }

    private static Facts Extract(string dumpPath, Options options, string symbolCache)
    {
        using DataTarget target = Open(dumpPath, symbolCache);
        using ClrRuntime runtime = CreateRuntime(target, dumpPath, options);

        // Thread names live only in the managed Thread objects, so they come with the heap walk.
        var names = new Dictionary<int, string>();
        HeapFacts? heap = options.Heap ? WalkHeap(runtime.Heap, options.Top, names) : null;

        var threads = runtime.Threads
            .Select(t => DescribeThread(t, names.GetValueOrDefault(t.ManagedThreadId), options.TopFrames))
            .ToList();
        string? runtimeDir = Path.GetDirectoryName(runtime.ClrInfo.ModuleInfo.FileName);
        return new Facts(Path.GetFullPath(dumpPath), RuntimeVersion(runtime), runtimeDir, threads, heap);
    }

    // ClrMD reports 0.0 for ELF modules. In a shared-framework layout the directory of
    // libcoreclr.so is named after the Microsoft.NETCore.App version; otherwise (self-contained)
    // fall back to CoreLib's product version on disk, then to its PE file version in the dump.
    private static string RuntimeVersion(ClrRuntime runtime)
    {
        string dirName = Path.GetFileName(Path.GetDirectoryName(runtime.ClrInfo.ModuleInfo.FileName) ?? "");
        if (Regex.IsMatch(dirName, @"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$"))
            return dirName;

        string coreLib = runtime.BaseClassLibrary.Name ?? "";
        if (File.Exists(coreLib) && FileVersionInfo.GetVersionInfo(coreLib).ProductVersion is { Length: > 0 } product)
            return product.Split('+')[0];
        Version? fileVersion = runtime.DataTarget.EnumerateModules()
            .Where(m => m.FileName == coreLib && m.Version != default)
            .Select(m => (Version)m.Version)
            .FirstOrDefault();
        return (fileVersion ?? (Version)runtime.ClrInfo.Version).ToString();
    }

    private static DataTarget Open(string dumpPath, string symbolCache)
    {
        if (!File.Exists(dumpPath))
            throw new DumpOpenException($"cannot open dump '{dumpPath}': file not found");
        try
        {
            // An empty symbol path keeps ClrMD off the network; the DAC is taken from the
            // runtime directory recorded in the dump, which exists on the machine that made it.
            return DataTarget.LoadDump(dumpPath, new DataTargetOptions { SymbolPaths = [], SymbolCachePath = symbolCache });
        }
        catch (Exception e) when (e is IOException or InvalidDataException or UnauthorizedAccessException
                                     or NotSupportedException or InvalidOperationException)
        {
            throw new DumpOpenException($"cannot open dump '{dumpPath}': {e.Message}", e);
        }
    }

    private static ClrRuntime CreateRuntime(DataTarget target, string dumpPath, Options options)
    {
        ClrInfo clr = target.ClrVersions.FirstOrDefault()
            ?? throw new DumpOpenException($"cannot open dump '{dumpPath}': no CoreCLR runtime found in it");
        try
        {
            return options.DacPath is null ? clr.CreateRuntime() : clr.CreateRuntime(options.DacPath);
        }
        catch (Exception e) when (e is FileNotFoundException or ClrDiagnosticsException or InvalidOperationException)
        {
            throw new DumpOpenException(
                $"cannot open dump '{dumpPath}': no usable DAC for the runtime at {clr.ModuleInfo.FileName} ({e.Message}); try --dac", e);
        }
    }

    private static ThreadFacts DescribeThread(ClrThread thread, string? name, int topCount)
    {
        var frames = new List<string>();
        var top = new List<string>();
        foreach (ClrStackFrame frame in thread.EnumerateStackTrace(includeContext: false, maxFrames: MaxFrames))
        {
            if (frame.Kind == ClrStackFrameKind.ManagedMethod)
            {
                frames.Add(frame.Method?.Signature ?? ShortName(frame.Method) ?? $"[Managed] 0x{frame.InstructionPointer:x}");
                if (top.Count < topCount && ShortName(frame.Method) is { } shortName)
                    top.Add(shortName);
            }
            else if (frame.FrameName is { } runtimeFrame)
            {
                frames.Add($"[Runtime] {runtimeFrame}");
            }
        }

        ExceptionFacts? exception = thread.CurrentException is { } ex
            ? new ExceptionFacts(ex.Type?.Name ?? "<unknown>", ex.Message, ex.HResult)
            : null;
        return new ThreadFacts(thread.ManagedThreadId, thread.OSThreadId, name, thread.IsFinalizer, thread.IsAlive,
            frames, top, exception);
    }

    private static string? ShortName(ClrMethod? method) =>
        method is null ? null : method.Type?.Name is { } type ? $"{type}.{method.Name}" : method.Name;

    // Null when the dump has no walkable GC heap (e.g. createdump --normal or --triage).
    private static HeapFacts? WalkHeap(ClrHeap heap, int top, Dictionary<int, string> threadNames)
    {
        if (!heap.CanWalkHeap)
            return null;

        var byType = new Dictionary<string, (long Count, long Bytes)>();
        long totalObjects = 0, totalBytes = 0;
        foreach (ClrObject obj in heap.EnumerateObjects())
        {
            ClrType? type = obj.Type;
            if (type is null || type.IsFree)
                continue;
            long size = (long)obj.Size;
            string typeName = type.Name ?? $"<MT 0x{type.MethodTable:x}>";
            byType[typeName] = byType.TryGetValue(typeName, out var c) ? (c.Count + 1, c.Bytes + size) : (1, size);
            totalObjects++;
            totalBytes += size;

            if (typeName == "System.Threading.Thread"
                && obj.TryReadField("_managedThreadId", out int id)
                && obj.TryReadStringField("_name", null, out string? name) && name is not null)
                threadNames[id] = name;
        }

        var types = byType
            .OrderByDescending(kv => kv.Value.Bytes).ThenBy(kv => kv.Key, StringComparer.Ordinal)
            .Take(top)
            .Select(kv => new TypeCount(kv.Key, kv.Value.Count, kv.Value.Bytes))
            .ToList();
        return new HeapFacts(totalObjects, totalBytes, types);
    }
}
