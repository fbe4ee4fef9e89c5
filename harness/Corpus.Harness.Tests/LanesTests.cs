using Corpus.Harness.Runner;
using Xunit;

namespace Corpus.Harness.Tests;

/// <summary>
/// Lanes, judged by what ran at the same time, not by timing: a cell that must run alongside another waits for
/// that one to start (10 s at most), and counters record how many of each kind ran at once.
/// </summary>
public class LanesTests
{
    private sealed record Cell(int Id, bool Waits, int? AwaitStartOf = null, bool Timed = false)
    {
        public CellLane Lane => Waits ? CellLane.Alongside : Timed ? CellLane.Timed : CellLane.Busy;
    }

    private sealed class Recorder(int count)
    {
        private readonly TaskCompletionSource[] _started =
            Enumerable.Range(0, count).Select(_ => new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).ToArray();
        private int _busy, _waiting, _all;
        public int MaxBusy, MaxWaiting, MaxAll;
        public readonly List<int> Order = [];
        public readonly List<string> Missed = [];

        private static void Raise(ref int now, ref int max, int by)
        {
            var v = Interlocked.Add(ref now, by);
            int seen;
            while (v > (seen = Volatile.Read(ref max)) && Interlocked.CompareExchange(ref max, v, seen) != seen) { }
        }

        public async Task<int> Run(Cell c)
        {
            if (c.Waits) Raise(ref _waiting, ref MaxWaiting, 1); else Raise(ref _busy, ref MaxBusy, 1);
            Raise(ref _all, ref MaxAll, 1);
            if (c.Timed && Volatile.Read(ref _all) > 1) lock (Missed) Missed.Add($"timed cell {c.Id} ran beside another cell");
            lock (Order) Order.Add(c.Id);
            _started[c.Id].TrySetResult();
            if (c.AwaitStartOf is { } other
                && await Task.WhenAny(_started[other].Task, Task.Delay(TimeSpan.FromSeconds(10))) != _started[other].Task)
                lock (Missed) Missed.Add($"cell {c.Id} ran without cell {other} alongside");
            await Task.Delay(20);
            Interlocked.Add(ref _all, -1);
            if (c.Waits) Interlocked.Add(ref _waiting, -1); else Interlocked.Add(ref _busy, -1);
            return c.Id;
        }
    }

    private static async Task<(IReadOnlyList<string> Done, Recorder R)> Run(IReadOnlyList<Cell> plan, int alongside, Func<bool>? stop = null)
    {
        var r = new Recorder(plan.Count);
        var done = await Lanes.RunAsync(plan, c => c.Lane, alongside, async (_, c) => (await r.Run(c)).ToString(), stop ?? (() => false));
        return (done, r);
    }

    [Fact]
    public async Task Busy_cells_run_one_at_a_time_and_waiting_cells_alongside_them()
    {
        // Busy cell 0 runs only with waiting cell 1 started; waiting cells 1 and 3 must be up together.
        Cell[] plan = [new(0, false, AwaitStartOf: 1), new(1, true, AwaitStartOf: 3), new(2, false), new(3, true), new(4, false)];
        var (done, r) = await Run(plan, alongside: 2);
        Assert.Equal(["0", "1", "2", "3", "4"], done);
        Assert.Empty(r.Missed);
        Assert.Equal(1, r.MaxBusy);
        Assert.Equal(2, r.MaxWaiting);
    }

    [Fact]
    public async Task Alongside_one_runs_waiting_cells_one_at_a_time()
    {
        Cell[] plan = [new(0, true), new(1, true), new(2, false, AwaitStartOf: 0), new(3, true)];
        var (_, r) = await Run(plan, alongside: 1);
        Assert.Empty(r.Missed);
        Assert.Equal(1, r.MaxWaiting);
    }

    [Fact]
    public async Task Alongside_zero_runs_every_cell_in_turn()
    {
        Cell[] plan = [new(0, true), new(1, false), new(2, true), new(3, false)];
        var (done, r) = await Run(plan, alongside: 0);
        Assert.Equal(["0", "1", "2", "3"], done);
        Assert.Equal([0, 1, 2, 3], r.Order);
        Assert.Equal(1, r.MaxAll);
    }

    [Fact]
    public async Task Timed_cells_run_last_alone_once_the_alongside_lane_is_done()
    {
        // Waiting cell 4 holds until busy cell 3 starts; timed cells 0 and 2 must come after both, in plan order.
        Cell[] plan = [new(0, false, Timed: true), new(1, false), new(2, false, Timed: true), new(3, false), new(4, true, AwaitStartOf: 3)];
        var (done, r) = await Run(plan, alongside: 2);
        Assert.Equal(["0", "1", "2", "3", "4"], done);
        Assert.Empty(r.Missed);
        Assert.Equal([0, 2], r.Order.TakeLast(2));
        Assert.Equal(2, r.MaxAll);
    }

    [Fact]
    public async Task Alongside_zero_keeps_timed_cells_in_plan_order()
    {
        Cell[] plan = [new(0, false, Timed: true), new(1, false), new(2, true)];
        var (_, r) = await Run(plan, alongside: 0);
        Assert.Equal([0, 1, 2], r.Order);
    }

    [Fact]
    public async Task A_stop_starts_no_further_cell()
    {
        var started = 0;
        var plan = Enumerable.Range(0, 6).Select(i => new Cell(i, i % 2 == 0)).ToList();
        var done = await Lanes.RunAsync(plan, c => c.Lane, 1, async (_, c) =>
        {
            Interlocked.Increment(ref started);
            await Task.Delay(50);
            return c.Id.ToString();
        }, () => Volatile.Read(ref started) >= 2);
        Assert.InRange(done.Count, 2, 3);
        Assert.Equal(done.Count, started);
    }

    [Fact]
    public async Task A_negative_count_is_refused()
    {
        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => Run([new Cell(0, true)], alongside: -1));
    }
}
