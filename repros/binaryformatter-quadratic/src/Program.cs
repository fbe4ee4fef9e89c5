// binaryformatter-quadratic: BinaryFormatter deserialization is O(n^2) on Mono/.NET Framework (ObjectManager's 4096-bucket table); write-up: docs/labs/binaryformatter-quadratic.md
// Kept to C# 7 syntax on purpose: the same file is compiled by Mono's mcs and by the .NET SDK.
using System;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Reflection;
using System.Runtime.Serialization.Formatters.Binary;

namespace Corpus.Repros.BinaryFormatterQuadratic
{
    public static class Program
    {
        public const string SecretValue = "private member value";

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

        // Entry point used by Main and by the tests (in-process).
        public static int Run(string[] args, TextWriter output, TextWriter error)
        {
            int n;
            if (args == null || args.Length != 2
                || !int.TryParse(args[1], NumberStyles.Integer, CultureInfo.InvariantCulture, out n)
                || n < 1)
            {
                return Usage(error);
            }

            if (args[0] != "deserialize" && args[0] != "idgen") return Usage(error);
            try
            {
                return args[0] == "deserialize" ? RunDeserialize(n, output, error) : RunIdGen(n, output);
            }
            catch (PlatformNotSupportedException e)
            {
                // .NET 9 and later removed the in-box BinaryFormatter: this runtime cannot run the repro at all.
                output.WriteLine("REPRO-UNSUPPORTED " + Environment.Version + " has no working BinaryFormatter: " + e.Message);
                return 3;
            }
        }

        static int Usage(TextWriter error)
        {
            error.WriteLine("usage: repro deserialize <n>   serialize then deserialize a BookShelf with n books, timing both");
            error.WriteLine("       repro idgen <n>         serialize a BookShelf with n books (about 2n objects) to a byte counter");
            error.WriteLine("n must be a positive integer");
            return 2;
        }

        public static BookShelf BuildShelf(int n)
        {
            BookShelf shelf = new BookShelf(SecretValue);
            shelf.Books.Capacity = n;
            for (int i = 0; i < n; i++)
            {
                // "Book " + i allocates a fresh string per book, so every title is its own object.
                shelf.Books.Add(new Book { Title = "Book " + i, Id = i });
            }
            return shelf;
        }

        // Objects the serializer hands an id to: the shelf, its List<Book>, the list's
        // backing Book[] array, the Secret string, and per book the Book plus its Title.
        public static long ObjectCount(int n)
        {
            return 2L * n + 4;
        }

        public static string ReadSecret(BookShelf shelf)
        {
            FieldInfo field = typeof(BookShelf).GetField("Secret", BindingFlags.Instance | BindingFlags.NonPublic);
            return field == null ? null : (string)field.GetValue(shelf);
        }

#pragma warning disable 618 // BinaryFormatter is obsolete (SYSLIB0011); using it is the point.
        static BinaryFormatter NewFormatter()
        {
            return new BinaryFormatter();
        }
#pragma warning restore 618

        static void QuietGc()
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
        }

        static string Seconds(double s)
        {
            return s.ToString("F6", CultureInfo.InvariantCulture);
        }

        // A small round trip first, so the timed one measures the serializer and not the JIT compiling it
        // (at 50,000 books that compile is a tenth of .NET's deserialize time).
        static string WarmUp()
        {
            const int books = 1000;
            MemoryStream stream = new MemoryStream();
            NewFormatter().Serialize(stream, BuildShelf(books));
            stream.Position = 0;
            return Validate(NewFormatter().Deserialize(stream), books);
        }

        static int RunDeserialize(int n, TextWriter output, TextWriter error)
        {
            string warm = WarmUp();
            if (warm != null)
            {
                error.WriteLine("REPRO-INVALID warm-up: " + warm);
                return 3;
            }
            BookShelf shelf = BuildShelf(n);
            MemoryStream stream = new MemoryStream();
            BinaryFormatter formatter = NewFormatter();

            QuietGc();
            double serializeCpuStart = ProcessCpu.Seconds();
            Stopwatch sw = Stopwatch.StartNew();
            formatter.Serialize(stream, shelf);
            sw.Stop();
            double serializeCpuSeconds = ProcessCpu.Seconds() - serializeCpuStart;
            double serializeSeconds = sw.Elapsed.TotalSeconds;
            long length = stream.Length;
            output.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "REPRO-REACHED serialized n={0} bytes={1}", n, length));

            // Drop the source graph so the deserializer's allocations are not
            // competing with it; only the bytes this process wrote are read back.
            shelf = null;
            stream.Position = 0;
            formatter = NewFormatter();
            output.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "REPRO-REACHED deserialize-start n={0}", n));

            QuietGc();
            double cpuStart = ProcessCpu.Seconds();
            sw = Stopwatch.StartNew();
            object result = formatter.Deserialize(stream);
            sw.Stop();
            double deserializeCpuSeconds = ProcessCpu.Seconds() - cpuStart;
            double deserializeSeconds = sw.Elapsed.TotalSeconds;

            string problem = Validate(result, n);
            if (problem != null)
            {
                error.WriteLine("REPRO-INVALID " + problem);
                return 3;
            }

            output.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "METRIC {{\"n\":{0},\"bytes\":{1},\"serialize_s\":{2},\"serialize_cpu_s\":{3},\"deserialize_s\":{4},\"deserialize_cpu_s\":{5}}}",
                n, length, Seconds(serializeSeconds), Seconds(serializeCpuSeconds), Seconds(deserializeSeconds),
                Seconds(deserializeCpuSeconds)));
            output.WriteLine("REPRO-DONE");
            return 0;
        }

        // Returns null when the graph came back intact, otherwise what is wrong.
        public static string Validate(object result, int n)
        {
            BookShelf back = result as BookShelf;
            if (back == null)
                return "result is " + (result == null ? "null" : result.GetType().FullName) + ", not a BookShelf";
            if (back.Books == null)
                return "Books is null";
            if (back.Books.Count != n)
                return string.Format(CultureInfo.InvariantCulture, "Books.Count={0}, expected {1}", back.Books.Count, n);
            string secret = ReadSecret(back);
            if (secret != SecretValue)
                return "Secret=" + (secret ?? "<null>") + ", expected " + SecretValue;
            int[] probes = { 0, n / 2, n - 1 };
            foreach (int i in probes)
            {
                Book b = back.Books[i];
                if (b == null)
                    return "Books[" + i + "] is null";
                if (b.Id != i || b.Title != "Book " + i)
                    return string.Format(CultureInfo.InvariantCulture,
                        "Books[{0}] = (\"{1}\", {2}), expected (\"Book {0}\", {0})", i, b.Title, b.Id);
            }
            return null;
        }

        static int RunIdGen(int n, TextWriter output)
        {
            BookShelf shelf = BuildShelf(n);
            long objects = ObjectCount(n);
            CountingStream sink = new CountingStream();
            BinaryFormatter formatter = NewFormatter();
            output.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "REPRO-REACHED serialize-start objects={0}", objects));

            QuietGc();
            Stopwatch sw = Stopwatch.StartNew();
            // Deliberately not caught: past ~13.17M objects, Mono/.NET Framework throw a
            // SerializationException from ObjectIDGenerator.Rehash, and the runtime's own
            // unhandled-exception report is the evidence.
            formatter.Serialize(sink, shelf);
            sw.Stop();

            output.WriteLine(string.Format(CultureInfo.InvariantCulture,
                "METRIC {{\"n\":{0},\"objects\":{1},\"bytes\":{2},\"serialize_s\":{3}}}",
                n, objects, sink.Length, Seconds(sw.Elapsed.TotalSeconds)));
            output.WriteLine("REPRO-DONE");
            GC.KeepAlive(shelf);
            return 0;
        }
    }

    // Write-only stream that keeps nothing but the number of bytes written.
    public sealed class CountingStream : Stream
    {
        long count;

        public override bool CanRead { get { return false; } }
        public override bool CanSeek { get { return false; } }
        public override bool CanWrite { get { return true; } }
        public override long Length { get { return count; } }
        public override long Position
        {
            get { return count; }
            set { throw new NotSupportedException(); }
        }

        public override void Write(byte[] buffer, int offset, int length)
        {
            count += length;
        }

        public override void WriteByte(byte value)
        {
            count++;
        }

        public override void Flush() { }
        public override int Read(byte[] buffer, int offset, int length) { throw new NotSupportedException(); }
        public override long Seek(long offset, SeekOrigin origin) { throw new NotSupportedException(); }
        public override void SetLength(long value) { throw new NotSupportedException(); }
    }
}
