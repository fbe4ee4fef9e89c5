namespace Corpus.Harness.Tests;

/// <summary>A throwaway corpus root (repros/ and expected/) in a temp folder, for selection and command-line tests.</summary>
public sealed class TestCorpus : IDisposable
{
    public string Root { get; } = Directory.CreateTempSubdirectory("corpus-cli-").FullName;

    public TestCorpus() => Directory.CreateDirectory(Path.Combine(Root, "harness"));

    public void Dispose() => Directory.Delete(Root, recursive: true);

    /// <summary>
    /// The real `corpus` Main on this root, its console captured: exit code, stdout, stderr. Tests that call it swap
    /// the process's console, so they belong to <see cref="ConsoleCollection"/>.
    /// </summary>
    public (int Exit, string Out, string Err) Main(params string[] args)
    {
        var (oldOut, oldErr) = (Console.Out, Console.Error);
        var (o, e) = (new StringWriter(), new StringWriter());
        Console.SetOut(o);
        Console.SetError(e);
        try { return (Program.Main([.. args, "--root", Root]).GetAwaiter().GetResult(), o.ToString(), e.ToString()); }
        finally
        {
            Console.SetOut(oldOut);
            Console.SetError(oldErr);
        }
    }

    /// <summary>
    /// Two cases and two variants on mono and net10. Windows-only, so on these machines every cell is `unsupported`
    /// without building or running anything, and the expected file says so.
    /// </summary>
    public void Write(string id, string? manifest = null, string? expected = null)
    {
        var dir = Path.Combine(Root, "repros", id);
        Directory.CreateDirectory(Path.Combine(dir, "src"));
        File.WriteAllText(Path.Combine(dir, "src", "Program.cs"), "class P { static void Main() {} }");
        File.WriteAllText(Path.Combine(dir, "repro.json"), (manifest ?? WindowsOnly).Replace("\"ID\"", $"\"{id}\""));
        Directory.CreateDirectory(Path.Combine(Root, "expected"));
        File.WriteAllText(Path.Combine(Root, "expected", id + ".json"), expected ?? AllUnsupported(id));
    }

    public const string WindowsOnly = """
        {
          "id": "ID", "title": "t", "category": "leak", "references": ["r"], "languages": ["csharp"], "platforms": ["windows"],
          "subjects": ["mono", "net10"], "variants": ["bug", "fix"],
          "build": { "mono": { "sources": ["src/*.cs"] } },
          "cases": [
            { "id": "one", "args": ["{variant}"], "signature": { "process": { "exit": "zero" } } },
            { "id": "big", "args": ["{variant}"], "tags": ["slow"], "signature": { "process": { "exit": "zero" } } }
          ]
        }
        """;

    public static string AllUnsupported(string id) =>
        $$"""{ "repro": "{{id}}", "cells": [ {{string.Join(",\n",
            from c in new[] { "one", "big" } from v in new[] { "bug", "fix" } from s in new[] { "mono", "net10" }
            select $$"""{ "case": "{{c}}", "variant": "{{v}}", "subject": "{{s}}", "outcome": "unsupported", "reason": "Windows only" }""")}} ] }""";
}
