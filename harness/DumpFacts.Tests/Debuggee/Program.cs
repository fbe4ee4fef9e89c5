using System.Runtime.CompilerServices;

namespace Corpus.Debuggee;

public sealed class Marker(int id)
{
    public int Id { get; } = id;
}

public static class Spinner
{
    public const string ThreadName = "corpus-spinner";
    public const int MarkerCount = 1000;

    private static volatile bool s_spinning;
    private static volatile int s_ticks;

    // Pure managed loop without calls, so whenever the dump is taken the thread's
    // instruction pointer is inside this method and the unwinder starts from it.
    [MethodImpl(MethodImplOptions.NoInlining)]
    public static void SpinForever()
    {
        s_spinning = true;
        while (true)
            s_ticks++;
    }

    public static void Main()
    {
        var markers = new Marker[MarkerCount];
        for (int i = 0; i < markers.Length; i++)
            markers[i] = new Marker(i);

        var spinner = new Thread(SpinForever) { Name = ThreadName, IsBackground = true };
        spinner.Start();
        while (!s_spinning)
            Thread.Sleep(1);

        Console.WriteLine($"READY {Environment.ProcessId}");
        // Parent closes stdin (or dies) -> exit; keeps markers reachable until then.
        Console.In.ReadToEnd();
        GC.KeepAlive(markers);
    }
}
