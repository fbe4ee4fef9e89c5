namespace Corpus.Harness.Runner;

/// <summary>
/// The order cells run in. Busy cells (they compute, and most time what they compute) run one at a time in plan
/// order. Waiting cells (<see cref="Signatures.ISignatureFamily.Waits"/>: a hang held for seconds) run alongside
/// them, at most <c>alongside</c> at once, started first so their waits overlap the busy lane. With alongside 0
/// every cell runs in turn. Results come back in plan order; a cell not started (stop requested) is left out.
/// </summary>
public static class Lanes
{
    public const int DefaultAlongside = 2;

    public static async Task<IReadOnlyList<TResult>> RunAsync<TCell, TResult>(
        IReadOnlyList<TCell> plan, Func<TCell, bool> waits, int alongside,
        Func<int, TCell, Task<TResult>> run, Func<bool> stop) where TResult : class
    {
        ArgumentOutOfRangeException.ThrowIfNegative(alongside);
        var results = new TResult?[plan.Count];
        var waiting = alongside == 0 ? [] : Enumerable.Range(0, plan.Count).Where(i => waits(plan[i])).ToList();
        var slots = new SemaphoreSlim(Math.Max(alongside, 1));

        async Task RunWaiting(int i)
        {
            await slots.WaitAsync();
            try
            {
                if (!stop()) results[i] = await run(i, plan[i]);
            }
            finally { slots.Release(); }
        }

        // Task.Run: a waiting cell's synchronous start (build, isolation) must not hold up the busy lane.
        var side = waiting.Select(i => Task.Run(() => RunWaiting(i))).ToList();
        var inTurn = new HashSet<int>(waiting);
        for (var i = 0; i < plan.Count && !stop(); i++)
            if (!inTurn.Contains(i)) results[i] = await run(i, plan[i]);
        await Task.WhenAll(side);
        return results.Where(r => r is not null).Select(r => r!).ToList();
    }
}
