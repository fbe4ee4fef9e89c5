// binaryformatter-quadratic: tests for the BinaryFormatter O(n^2) deserialization repro; write-up: docs/labs/binaryformatter-quadratic.md
using System;
using System.Collections.Generic;
using System.Linq;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Runtime.Serialization.Formatters.Binary;
using System.Text.Json;
using System.Text.RegularExpressions;
using System.Threading;
using Xunit;

namespace Corpus.Repros.BinaryFormatterQuadratic.Tests
{
    [Collection(ProcessClockCollection.Name)]
    public class ProgramTests
    {
        static string[] Lines(StringWriter w)
        {
            return w.ToString().Split(new[] { "\r\n", "\n" }, StringSplitOptions.RemoveEmptyEntries);
        }

        static byte[] Serialize(object graph)
        {
            using (var ms = new MemoryStream())
            {
                new BinaryFormatter().Serialize(ms, graph);
                return ms.ToArray();
            }
        }

        [Fact]
        public void RoundTripOf10000BooksKeepsEveryBookAndThePrivateField()
        {
            const int n = 10000;
            byte[] bytes = Serialize(Program.BuildShelf(n));

            object back;
            using (var ms = new MemoryStream(bytes))
                back = new BinaryFormatter().Deserialize(ms);

            var shelf = Assert.IsType<BookShelf>(back);
            Assert.Equal("private member value", Program.ReadSecret(shelf));
            Assert.Equal(n, shelf.Books.Count);
            for (int i = 0; i < n; i++)
            {
                Assert.Equal(i, shelf.Books[i].Id);
                Assert.Equal("Book " + i, shelf.Books[i].Title);
            }
            Assert.Null(Program.Validate(shelf, n));
        }

        [Fact]
        public void ValidateReportsADamagedGraph()
        {
            BookShelf shelf = Program.BuildShelf(10);
            shelf.Books[9].Title = "Book 99";
            Assert.Contains("Books[9]", Program.Validate(shelf, 10));

            Assert.Contains("Books.Count=10", Program.Validate(Program.BuildShelf(10), 11));
            Assert.Contains("Secret", Program.Validate(new BookShelf("other"), 0));
            Assert.Contains("not a BookShelf", Program.Validate("a string", 1));
        }

        [Fact]
        public void DeserializeCommandPrintsTheProtocolLinesInOrder()
        {
            const int n = 3000;
            var output = new StringWriter();
            var error = new StringWriter();

            int exit = Program.Run(new[] { "deserialize", n.ToString(CultureInfo.InvariantCulture) }, output, error);

            Assert.Equal("", error.ToString());
            Assert.Equal(0, exit);
            string[] lines = Lines(output);
            Assert.Equal(4, lines.Length);

            Match serialized = Regex.Match(lines[0], @"^REPRO-REACHED serialized n=3000 bytes=(\d+)$");
            Assert.True(serialized.Success, lines[0]);
            long bytes = long.Parse(serialized.Groups[1].Value, CultureInfo.InvariantCulture);
            Assert.Equal(Serialize(Program.BuildShelf(n)).LongLength, bytes);

            Assert.Equal("REPRO-REACHED deserialize-start n=3000", lines[1]);

            Assert.StartsWith("METRIC {", lines[2]);
            using (JsonDocument metric = JsonDocument.Parse(lines[2].Substring("METRIC ".Length)))
            {
                JsonElement root = metric.RootElement;
                Assert.Equal(n, root.GetProperty("n").GetInt32());
                Assert.Equal(bytes, root.GetProperty("bytes").GetInt64());
                double ser = root.GetProperty("serialize_s").GetDouble();
                double de = root.GetProperty("deserialize_s").GetDouble();
                double cpu = root.GetProperty("deserialize_cpu_s").GetDouble();
                Assert.InRange(ser, 0.0, 60.0);
                Assert.InRange(de, 0.0, 60.0);
                Assert.InRange(cpu, 1e-6, 60.0);
            }
            Assert.Matches(@"""serialize_s"":\d+\.\d{4,}", lines[2]);
            Assert.Matches(@"""deserialize_s"":\d+\.\d{4,}", lines[2]);
            Assert.Matches(@"""deserialize_cpu_s"":\d+\.\d{4,}", lines[2]);

            Assert.Equal("REPRO-DONE", lines[3]);
        }

        // The sweep's clock counts this process's work and nothing else: a spin moves it as far as the wall clock, a
        // sleep of the same length does not. The clock is the whole process's, so no other test may compute beside it
        // (a CI run read 0.16 s over the sleep while the class's other tests ran): see ProcessClockCollection.
        [Fact]
        public void ProcessCpuCountsWorkNotWaiting()
        {
            double start = ProcessCpu.Seconds();
            Stopwatch wall = Stopwatch.StartNew();
            while (ProcessCpu.Seconds() - start < 0.2 && wall.Elapsed.TotalSeconds < 10) { }
            Assert.InRange(ProcessCpu.Seconds() - start, 0.2, 10.0);

            // The clock is the whole process's: what the runtime's other threads do meanwhile (a CI run read 0.26 s
            // over the sleep beside busy loops) is counted too. The kernel's per-thread counts say how much was theirs.
            var threadsBefore = OtherThreadsTicks();
            double beforeSleep = ProcessCpu.Seconds();
            Thread.Sleep(300);
            double moved = ProcessCpu.Seconds() - beforeSleep;
            var threadsAfter = OtherThreadsTicks();
            var others = threadsAfter.Select(kv => (kv.Value.Name, Ticks: kv.Value.Ticks - (threadsBefore.TryGetValue(kv.Key, out var b) ? b.Ticks : 0)))
                                     .Where(t => t.Ticks > 0).OrderByDescending(t => t.Ticks).ToList();
            // USER_HZ ticks: each thread's count may be a tick short or over.
            double othersSeconds = others.Sum(t => t.Ticks) / 100.0, slack = 0.01 * (others.Count + 1);
            Assert.True(moved - othersSeconds <= 0.1 + slack,
                        $"the clock moved {moved:0.000} s over a 300 ms sleep; other threads used {othersSeconds:0.00} s: "
                        + string.Join(", ", others.Select(t => $"{t.Name} {t.Ticks / 100.0:0.00} s")));
        }

        /// <summary>Linux: CPU ticks (utime + stime) of every thread of this process but the calling one; empty elsewhere.</summary>
        private static Dictionary<string, (string Name, long Ticks)> OtherThreadsTicks()
        {
            var ticks = new Dictionary<string, (string Name, long Ticks)>();
            if (!Directory.Exists("/proc/self/task")) return ticks;
            var self = Path.GetFileName(new FileInfo("/proc/thread-self").LinkTarget ?? "");
            foreach (var dir in Directory.EnumerateDirectories("/proc/self/task"))
            {
                if (Path.GetFileName(dir) == self) continue;
                try
                {
                    var stat = File.ReadAllText(Path.Combine(dir, "stat"));
                    var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
                    ticks[Path.GetFileName(dir)] = (stat[(stat.IndexOf('(') + 1)..stat.LastIndexOf(')')], long.Parse(fields[11]) + long.Parse(fields[12]));
                }
                catch (IOException) { }
            }
            return ticks;
        }

        [Fact]
        public void IdGenCommandCountsObjectsAndBytes()
        {
            const int n = 500;
            var output = new StringWriter();
            var error = new StringWriter();

            int exit = Program.Run(new[] { "idgen", "500" }, output, error);

            Assert.Equal(0, exit);
            Assert.Equal("", error.ToString());
            string[] lines = Lines(output);
            Assert.Equal(3, lines.Length);
            Assert.Equal("REPRO-REACHED serialize-start objects=1004", lines[0]);
            Assert.StartsWith("METRIC {", lines[1]);
            using (JsonDocument metric = JsonDocument.Parse(lines[1].Substring("METRIC ".Length)))
            {
                JsonElement root = metric.RootElement;
                Assert.Equal(n, root.GetProperty("n").GetInt32());
                Assert.Equal(2 * n + 4, root.GetProperty("objects").GetInt64());
                // The counting stream must see exactly what a MemoryStream would hold.
                Assert.Equal(Serialize(Program.BuildShelf(n)).LongLength, root.GetProperty("bytes").GetInt64());
                Assert.InRange(root.GetProperty("serialize_s").GetDouble(), 0.0, 60.0);
            }
            Assert.Equal("REPRO-DONE", lines[2]);
        }

        [Fact]
        public void CountingStreamCountsWithoutKeeping()
        {
            var s = new CountingStream();
            s.Write(new byte[10], 2, 5);
            s.WriteByte(1);
            Assert.Equal(6, s.Length);
            Assert.Throws<NotSupportedException>(() => s.Read(new byte[1], 0, 1));
        }

        [Theory]
        [InlineData("")]
        [InlineData("deserialize")]
        [InlineData("deserialize abc")]
        [InlineData("deserialize 0")]
        [InlineData("idgen -5")]
        [InlineData("explode 10")]
        [InlineData("idgen 10 extra")]
        public void BadArgumentsPrintUsageAndExit2(string commandLine)
        {
            string[] args = commandLine.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries);
            var output = new StringWriter();
            var error = new StringWriter();

            Assert.Equal(2, Program.Run(args, output, error));
            Assert.Equal("", output.ToString());
            Assert.StartsWith("usage:", error.ToString());
        }
    }

    /// <summary>Tests that read the whole process's CPU clock run alone, never beside another test of the assembly.</summary>
    [CollectionDefinition(Name, DisableParallelization = true)]
    public sealed class ProcessClockCollection
    {
        public const string Name = "process CPU clock";
    }
}
