// @ID@: see docs/labs/@ID@.md
// Kept to C# 7 syntax on purpose: the same file is compiled by Mono's mcs and by the .NET SDK.
using System;
using System.IO;

namespace Corpus.Repros.@PASCAL@
{
    public sealed class ExampleBugException : Exception
    {
        public ExampleBugException(string message) : base(message) { }
    }

    public static class Program
    {
        public static int Main(string[] args)
        {
            // Protocol lines must reach the harness as soon as they are printed: a crash can follow.
            StreamWriter stdout = new StreamWriter(Console.OpenStandardOutput());
            stdout.AutoFlush = true;
            Console.SetOut(stdout);
            StreamWriter stderr = new StreamWriter(Console.OpenStandardError());
            stderr.AutoFlush = true;
            Console.SetError(stderr);

            if (args.Length != 1 || (args[0] != "bug" && args[0] != "fix"))
            {
                Console.Error.WriteLine("usage: @PASCAL@ bug|fix");
                return 2;
            }
            DateTime start = DateTime.UtcNow;
            Console.WriteLine("REPRO-REACHED start");
            if (args[0] == "bug")
            {
                // The example bug: replace with the write-up's code, keeping its shape.
                Console.WriteLine("REPRO-REACHED bug");
                throw new ExampleBugException("the example bug happened");
            }
            Console.WriteLine("METRIC {\"seconds\": " + (DateTime.UtcNow - start).TotalSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture) + "}");
            Console.WriteLine("REPRO-DONE");
            return 0;
        }
    }
}
