namespace Corpus.Harness.Runner;

/// <summary>How a cell uses the machine, which decides when a run of many cells starts it.</summary>
public enum CellLane
{
    /// <summary>It computes: one busy or timed cell at a time.</summary>
    Busy,
    /// <summary>It computes and its verdict is a measured time: after the busy cells, once the alongside lane is done.</summary>
    Timed,
    /// <summary>It mostly waits (a hang held for seconds, memory held while it is measured): beside the busy lane.</summary>
    Alongside,
}

/// <summary>
/// The order cells run in. Busy cells run one at a time in plan order. Alongside cells run beside them, at most
/// <c>alongside</c> at once, started first so their waits overlap the busy lane. Timed cells come last, one at a
/// time, when the alongside lane has finished: their times see no other cell's work. With alongside 0 every cell
/// runs in turn, in plan order. Results come back in plan order; a cell not started (stop requested) is left out.
/// </summary>
public static class Lanes
{
    public const int DefaultAlongside = 2;

    public static async Task<IReadOnlyList<TResult>> RunAsync<TCell, TResult>(
        IReadOnlyList<TCell> plan, Func<TCell, CellLane> lane, int alongside,
        Func<int, TCell, Task<TResult>> run, Func<bool> stop) where TResult : class
    {
        ArgumentOutOfRangeException.ThrowIfNegative(alongside);
        var results = new TResult?[plan.Count];
        var all = Enumerable.Range(0, plan.Count).ToList();
        if (alongside == 0)
        {
            foreach (var i in all.TakeWhile(_ => !stop())) results[i] = await run(i, plan[i]);
            return results.Where(r => r is not null).Select(r => r!).ToList();
        }
        var slots = new SemaphoreSlim(alongside);

        async Task RunAlongside(int i)
        {
            await slots.WaitAsync();
            try
            {
                if (!stop()) results[i] = await run(i, plan[i]);
            }
            finally { slots.Release(); }
        }

        // Task.Run: an alongside cell's synchronous start (build, isolation) must not hold up the busy lane.
        var side = all.Where(i => lane(plan[i]) == CellLane.Alongside).Select(i => Task.Run(() => RunAlongside(i))).ToList();
        foreach (var i in all.Where(i => lane(plan[i]) == CellLane.Busy).TakeWhile(_ => !stop()))
            results[i] = await run(i, plan[i]);
        await Task.WhenAll(side);
        foreach (var i in all.Where(i => lane(plan[i]) == CellLane.Timed).TakeWhile(_ => !stop()))
            results[i] = await run(i, plan[i]);
        return results.Where(r => r is not null).Select(r => r!).ToList();
    }
}
