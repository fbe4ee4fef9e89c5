using Corpus.Harness.Runner;
using Xunit;

namespace Corpus.Harness.Tests;

public class LanesTests
{
    private sealed record Cell(int Id, bool Waits, int Ms);
    private sealed record Done(int Id, DateTime Start, DateTime End);

    private static async Task<IReadOnlyList<Done>> Run(IReadOnlyList<Cell> plan, int alongside, Func<bool>? stop = null)
    {
        return await Lanes.RunAsync(plan, c => c.Waits, alongside, async (_, c) =>
        {
            var start = DateTime.UtcNow;
            await Task.Delay(c.Ms);
            return new Done(c.Id, start, DateTime.UtcNow);
        }, stop ?? (() => false));
    }

    private static bool Overlap(Done a, Done b) => a.Start < b.End && b.Start < a.End;

    [Fact]
    public async Task Busy_cells_never_overlap_and_waiting_cells_overlap_them()
    {
        var plan = new[] { new Cell(0, false, 400), new Cell(1, true, 1200), new Cell(2, false, 400), new Cell(3, true, 1200), new Cell(4, false, 400) };
        var done = await Run(plan, alongside: 2);
        Assert.Equal([0, 1, 2, 3, 4], done.Select(d => d.Id));
        var busy = done.Where(d => !plan[d.Id].Waits).ToList();
        foreach (var a in busy)
            foreach (var b in busy.Where(b => b != a))
                Assert.False(Overlap(a, b), $"busy cells {a.Id} and {b.Id} ran at the same time");
        Assert.True(Overlap(done[1], done[0]), "the waiting cell did not run alongside the first busy cell");
        Assert.True(Overlap(done[1], done[3]), "two waiting cells did not run together with alongside 2");
    }

    [Fact]
    public async Task Alongside_one_runs_waiting_cells_one_at_a_time()
    {
        var plan = new[] { new Cell(0, true, 600), new Cell(1, true, 600), new Cell(2, false, 400) };
        var done = await Run(plan, alongside: 1);
        Assert.False(Overlap(done[0], done[1]));
        Assert.True(Overlap(done[0], done[2]));
    }

    [Fact]
    public async Task Alongside_zero_runs_every_cell_in_turn()
    {
        var plan = new[] { new Cell(0, true, 100), new Cell(1, false, 100), new Cell(2, true, 100) };
        var done = await Run(plan, alongside: 0);
        Assert.Equal([0, 1, 2], done.Select(d => d.Id));
        Assert.True(done[0].End <= done[1].Start && done[1].End <= done[2].Start, "cells overlapped with alongside 0");
    }

    [Fact]
    public async Task A_stop_starts_no_further_cell()
    {
        var started = 0;
        var plan = Enumerable.Range(0, 6).Select(i => new Cell(i, i % 2 == 0, 50)).ToList();
        var done = await Lanes.RunAsync(plan, c => c.Waits, 1, async (_, c) =>
        {
            Interlocked.Increment(ref started);
            await Task.Delay(c.Ms);
            return new Done(c.Id, DateTime.UtcNow, DateTime.UtcNow);
        }, () => Volatile.Read(ref started) >= 2);
        Assert.InRange(done.Count, 2, 3);
        Assert.Equal(done.Count, started);
    }

    [Fact]
    public async Task A_negative_count_is_refused()
    {
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => Run([new Cell(0, true, 1)], alongside: -1));
    }
}
