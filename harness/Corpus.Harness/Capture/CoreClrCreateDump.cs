using System.Text.Json;
using Corpus.Harness.Containment;

namespace Corpus.Harness.Capture;

/// <summary>
/// CoreCLR's own createdump writes a core of the live process; the dump-facts tool (ClrMD) turns it into
/// threads with managed frames. dotnet-dump would do the same but the NuGet copy here does not carry it.
/// </summary>
public sealed class CoreClrCreateDump(IToolRunner runner, string? createdump, string dumpFactsDll, bool heap = false) : ICaptureBackend
{
    public string Name => "createdump";
    public bool HeapFacts => heap;

    public string? Unavailable =>
        createdump is null || !File.Exists(createdump) ? $"no createdump at {createdump ?? "(no runtime)"}"
        : !File.Exists(dumpFactsDll) ? $"the dump-facts tool is not built ({dumpFactsDll}); run make setup"
        : null;

    public async Task<CaptureRecord> SnapshotAsync(ContainedProcess target, string dir, int index, CancellationToken cancel) =>
        await (await TakeAsync(target, dir, index, cancel))();

    /// <summary>createdump while the process is stopped; ClrMD's read of the core (dump-facts) when the caller asks.</summary>
    public async Task<Func<Task<CaptureRecord>>> TakeAsync(ContainedProcess target, string dir, int index, CancellationToken cancel)
    {
        var core = Path.Combine(dir, $"snapshot-{index}.core");
        var at = target.Elapsed;
        // --withheap: the stacks' memory is needed to walk managed frames; a full dump adds little here.
        var r = await Task.Run(() => runner.Run(createdump!, ["--withheap", "-f", core, target.Pid.ToString()],
                                                TimeSpan.FromMinutes(5)), CancellationToken.None);
        if (r.ExitCode != 0 || !File.Exists(core)) throw new InvalidOperationException(r.Describe("createdump"));
        var bytes = new FileInfo(core).Length;
        return async () =>
        {
            var facts = Path.Combine(dir, $"snapshot-{index}.facts.json");
            string[] factArgs = heap ? [dumpFactsDll, core, "--top", "100000", "--out", facts] : [dumpFactsDll, core, "--no-heap", "--out", facts];
            var f = await Task.Run(() => runner.Run("dotnet", factArgs, TimeSpan.FromMinutes(5)), CancellationToken.None);
            if (f.ExitCode != 0) throw new InvalidOperationException(f.Describe("dump-facts"));
            return new CaptureRecord(Name, core, bytes, r.Seconds, Math.Round(at, 3), ReadThreads(facts), null, ReadHeap(facts));
        };
    }

    /// <summary>Live instances by type name, when the dump's heap was walked.</summary>
    public static IReadOnlyDictionary<string, long>? ReadHeap(string factsFile)
    {
        using var doc = JsonDocument.Parse(File.ReadAllText(factsFile));
        if (!doc.RootElement.TryGetProperty("heap", out var heap) || heap.ValueKind != JsonValueKind.Object) return null;
        return heap.GetProperty("types").EnumerateArray()
                   .ToDictionary(t => t.GetProperty("type").GetString() ?? "?", t => t.GetProperty("count").GetInt64());
    }

    public static IReadOnlyList<ThreadStack> ReadThreads(string factsFile)
    {
        using var doc = JsonDocument.Parse(File.ReadAllText(factsFile));
        var list = new List<ThreadStack>();
        foreach (var t in doc.RootElement.GetProperty("threads").EnumerateArray())
        {
            var id = t.TryGetProperty("managedThreadId", out var m) ? m.ToString() : "?";
            var frames = t.GetProperty("frames").EnumerateArray().Select(x => x.GetString() ?? "").ToList();
            list.Add(new ThreadStack($"managed {id}", frames));
        }
        return list;
    }
}
