using System.CommandLine;
using System.CommandLine.Completions;
using System.CommandLine.Help;
using System.CommandLine.Invocation;
using System.CommandLine.Parsing;
using System.Text;
using Corpus.Harness.Subjects;

namespace Corpus.Harness;

/// <summary>
/// The commands and options of `corpus`, declared once for System.CommandLine: it parses them and generates each
/// command's help (`corpus run --help`) and the shell completions of the [suggest] directive (dotnet-suggest). The
/// subjects in the help and the completions come from the run's <see cref="SubjectKinds"/>, so they follow the kinds.
/// </summary>
internal static class Cli
{
    /// <summary>The commands, with the subjects of these kinds in their help and completions.</summary>
    private static RootCommand Build(SubjectKinds kinds)
    {
        IEnumerable<string> SubjectCompletions() => Completions(kinds);
        Option RootDir() => Value("root", "DIR", "the corpus checkout (default: found upward from the current folder)");
        Option Repro() => List("repro", "ID[,ID]", "only these repros");
        Option Case() => List("case", "ID[,ID]", "only these cases");
        Option Variant() => List("variant", "V[,V]", "only these variants (bug, fixed, ...)");
        Option Subject() => List("subject", "S[,S]", "only these subjects: a built-in name or KIND:PATH (see Subjects below)", SubjectCompletions);
        Option ExcludeTag() => List("exclude-tag", "T[,T]", "skip cases with this tag (e.g. slow)");
        Option Keep() => Flag("keep", "keep artifacts of cells that matched expected/");
        Option RunId() => Value("run-id", "ID", "name of artifacts/<run-id>/, which must not exist yet (default: UTC time)");
        Option Env() => List("env", "NAME=VALUE", "set for every run of the selected cells (repeat it for more), over the manifest's "
                                                 + "env; recorded in each cell and its re-run line, as are the DOTNET_*, COMPlus_*, "
                                                 + "MONO_* and WINE* variables the harness passes on");

        var subjects = List("subjects", "S1,S2,…", "the subjects to probe, oldest first (at least two; see Subjects below)", SubjectCompletions);
        var root = new RootCommand("corpus: reproducers of real .NET, Win32 and C++ bugs, run as cells and gated against expected/")
        {
            Command(Verb.Run, "run cells and gate them against expected/",
                    RootDir(), Repro(), Case(), Variant(), Subject(), ExcludeTag(), Keep(),
                    Value("runs", "N", "races: exactly N runs per cell (a rate), not stop at the first hit"),
                    RunId(),
                    Value("alongside", "N", "cells that mostly wait (hangs, held memory) run alongside the busy ones, N at once "
                                            + "(default 2), and timed cells (sweeps) run last, alone; 0 runs every cell in turn, in plan order"),
                    Env(),
                    Value("shard", "I/N", "only the I-th of N shares of the selected cells, balanced by their recorded seconds "
                                          + "(ci/durations.json); `corpus merge` joins the N runs")),
            Command(Verb.List, "the cells a run would run, with their expected outcomes",
                    RootDir(), Repro(), Case(), Variant(), Subject(), ExcludeTag(), Flag("json", "print JSON, for other drivers")),
            Runs(Command(Verb.Merge, "join the runs of `run --shard I/N` (1..N) into one run, as one run of their selection would have "
                               + "written it, and gate it (exit codes as for run)", RootDir(),
                          Value("out", "DIR", "the merged run's folder, which must not exist yet (default: artifacts/<UTC time>)"))),
            Runs(Command(Verb.Durations, "record each cell's seconds from runs' summaries in ci/durations.json, which --shard balances by",
                         RootDir(), Value("file", "FILE", "the record to update (default ci/durations.json)"))),
            Command(Verb.Validate, "check every manifest and expected file", RootDir()),
            Command(Verb.Subjects, "list built-in subjects and whether they are usable here; with --subject, resolve (and provision) those",
                    RootDir(), Subject()),
            Command(Verb.Clean, "kill and remove what a killed run left behind", RootDir()),
            Command(Verb.Bisect, "which subject changed one cell's outcome: prints each probe and the last/first subject on either side",
                    RootDir(), Value("repro", "ID", "the repro (required)"), Value("case", "C", "the case (needed when the repro has several)"),
                    Value("variant", "V", "the variant (needed when the repro has several)"), subjects, Keep(), RunId(), Env(),
                    Value("from", "RUN", "start from a matrix's run (artifacts/RUN/matrix.json): its change is the range bisected, "
                                         + "--subjects (if given) a finer list cut to that range")),
            Command(Verb.Matrix, "run the selection on every subject in one run: a table of cells × subjects (matrix.md, matrix.json, matrix.png)",
                    RootDir(), Repro(), Case(), Variant(),
                    List("subjects", "S1,S2,…", "the subjects, in the order of the columns (default: each case's own)", SubjectCompletions),
                    ExcludeTag(), Keep(), RunId(), Env()),
            Command(Verb.Compare, "every selected cell on a base and a new subject (a build before and after a patch): fixed, regressed, "
                               + "unchanged, changed or inconclusive per cell; exit 1 when any regressed",
                    RootDir(), Value("base", "S", "the subject before the patch (see Subjects below)"),
                    Value("new", "S", "the subject after the patch"), Repro(), Case(), Variant(), ExcludeTag(),
                    Value("rounds", "N", "runs per subject of one-run cells (process, hang, shmem), for an interval over runs (default 3)"),
                    Value("alongside", "N", "as for run"),
                    Value("from", "RUN", "a finished run of this checkout (a run id under artifacts/, or its folder) whose cells on both "
                                         + "subjects stand for round 1 where the family compares such cells (sweeps); the rest run here"),
                    Keep(), RunId(), Env()),
            Command(Verb.Winsmoke, "(Linux) the harness published for win-x64 runs the windows subject's cells under Wine, compared "
                                + "with the Linux harness's outcomes",
                    RootDir(), Value("exe", "PATH", "the published harness (default build/harness/win-x64/corpus.exe)")),
            Command(Verb.Selftest, "check this platform's containment with real processes (Windows: the Job Object path)",
                    Value("dir", "DIR", "where the children run (default: a temporary folder, removed after)")),
            // The selftest's own child processes: not for users.
            new Command(Verb.SelftestChild.Name()) { Hidden = true, Options = { Value("mode", "MODE", ""), Value("dir", "DIR", "") } },
        };
        var help = root.Options.OfType<HelpOption>().Single();
        help.Action = new HelpWithSubjects((SynchronousCommandLineAction)help.Action!, kinds);
        return root;
    }

    /// <summary>RUN…: run ids under artifacts/ or run folders.</summary>
    private static Command Runs(Command c)
    {
        c.Arguments.Add(new Argument<string[]>("RUN") { Description = "a run id under artifacts/, or a run folder", Arity = ArgumentArity.ZeroOrMore });
        return c;
    }

    private static Command Command(Verb verb, string description, params Option[] options)
    {
        var c = new Command(verb.Name(), description);
        foreach (var o in options) c.Options.Add(o);
        return c;
    }

    /// <summary>A comma-separated list that may repeat; an empty value (e.g. SUBJECT= from make) means "not given".</summary>
    private static Option<string[]> List(string name, string helpName, string description, Func<IEnumerable<string>>? values = null)
    {
        var o = new Option<string[]>("--" + name)
        {
            HelpName = helpName, Description = description, Arity = ArgumentArity.OneOrMore, AllowMultipleArgumentsPerToken = false,
        };
        // An option that may repeat is never full, so completion would offer only its own values after one is given.
        o.CompletionSources.Add(c => [.. values?.Invoke() ?? [], .. OtherOptions(c)]);
        return o;
    }

    private static IEnumerable<string> OtherOptions(CompletionContext c) =>
        c.WordToComplete.Length == 0 || c.WordToComplete.StartsWith('-')
            ? c.ParseResult.CommandResult.Command.Options.Where(x => !x.Hidden).Select(x => x.Name) : [];

    /// <summary>One value; given twice, the last one counts.</summary>
    private static Option<string[]> Value(string name, string helpName, string description) => List(name, helpName, description);

    private static Option<bool> Flag(string name, string description)
    {
        var o = new Option<bool>("--" + name) { Description = description };
        o.CompletionSources.Add(OtherOptions);
        return o;
    }

    private static IEnumerable<string> Completions(SubjectKinds kinds) =>
        [.. kinds.BuiltIns, .. kinds.All.SelectMany(k => k.UserPrefixes).Distinct().Select(p => p + ":")];

    /// <summary>The subjects section of the help: every kind's built-in names and the KIND:PATH forms it takes.</summary>
    internal static string SubjectHelp(SubjectKinds kinds)
    {
        var text = new StringBuilder("Subjects (from the subject kinds; a built-in name, or KIND:PATH for your build):\n");
        var width = kinds.All.Max(k => k.Name.Length) + 2;
        foreach (var kind in kinds.All)
        {
            text.Append($"  {kind.Name.PadRight(width)}{string.Join(", ", kind.BuiltInForms)}\n");
            if (kind.UserPrefixes.Count > 0)
                text.Append($"  {"".PadRight(width)}{string.Join(", ", kind.UserPrefixes.Select(p => p + ":PATH"))}: PATH is {kind.UserPathMeaning}\n");
        }
        return text.ToString();
    }

    internal const string ExitHelp = """
        Exit codes:
          0          every cell as expected (a cell with no expectation: reproduced or clean)
          1          some differ
          2          bad input (manifest, expected, arguments, an unusable subject)
          3          stopped: the disk filled up (no verdict)
          130 / 143  interrupted by SIGINT / SIGTERM (the running cell is killed and reported as interrupted)

        """;

    /// <summary>The generated help, then the subjects (for commands that take them) and the exit codes.</summary>
    private sealed class HelpWithSubjects(SynchronousCommandLineAction generated, SubjectKinds kinds) : SynchronousCommandLineAction
    {
        public override int Invoke(ParseResult result)
        {
            var exit = generated.Invoke(result);
            var output = result.InvocationConfiguration.Output;
            var command = result.CommandResult.Command;
            if (command.Options.Any(o => o.Name is "--subject" or "--subjects" or "--base")) output.WriteLine(SubjectHelp(kinds));
            if (command is RootCommand || command.Name == "run") output.Write(ExitHelp);
            return exit;
        }
    }

    /// <summary>Writes the help of a command (the root's for null) to a writer.</summary>
    public static void WriteHelp(string? command, TextWriter to, SubjectKinds kinds) =>
        Build(kinds).Parse(command is null ? ["--help"] : [command, "--help"]).Invoke(new InvocationConfiguration { Output = to, Error = to });

    public static ParseResult Parse(string[] argv, SubjectKinds kinds)
    {
        var root = Build(kinds);
        // No response files: an argument that starts with '@' is a value. `--subject=` is an empty value (not given),
        // where System.CommandLine would take the next argument as the value.
        return root.Parse([.. CommandFirst(root, argv).SelectMany(a => a.StartsWith("--") && a.IndexOf('=') == a.Length - 1 ? [a[..^1], ""] : new[] { a })],
                          new ParserConfiguration { ResponseFileTokenReplacer = null });
    }

    /// <summary>Options may come before the command (`corpus --root DIR validate`): the command word moves to the front.</summary>
    private static string[] CommandFirst(RootCommand root, string[] argv)
    {
        var flags = root.Subcommands.SelectMany(c => c.Options).OfType<Option<bool>>().Select(o => o.Name).Append("--help").ToHashSet();
        var start = argv.TakeWhile(a => a.StartsWith('[')).Count();   // directives such as [suggest:N]
        for (var i = start; i < argv.Length; i++)
        {
            var a = argv[i];
            if (!a.StartsWith('-')) return i == start ? argv : [.. argv[..start], a, .. argv[start..i], .. argv[(i + 1)..]];
            if (a.StartsWith("--") && !a.Contains('=') && !flags.Contains(a)) i++;   // the option's value
        }
        return argv;
    }

    /// <summary>Whether System.CommandLine answers this command line itself: help or a directive such as [suggest].</summary>
    public static bool AnswersItself(ParseResult result) => result.Action is not null and not ParseErrorAction;

    public static int Answer(ParseResult result) =>
        result.Invoke(new InvocationConfiguration { Output = Console.Out, Error = Console.Error });
}

/// <summary>A command line System.CommandLine could not take; exit 2 with the reason and the command's help.</summary>
/// <summary>The commands of `corpus`: declared with their options in <see cref="Cli"/>, dispatched in Program on this type.</summary>
internal enum Verb { Run, List, Merge, Durations, Validate, Subjects, Clean, Bisect, Matrix, Compare, Winsmoke, Selftest, SelftestChild }

internal static class Verbs
{
    /// <summary>As typed on the command line: "run", "selftest-child".</summary>
    public static string Name(this Verb verb) => verb == Verb.SelftestChild ? "selftest-child" : verb.ToString().ToLowerInvariant();

    public static Verb Of(string name) =>
        Enum.GetValues<Verb>().Where(v => v.Name() == name).Cast<Verb?>().FirstOrDefault()
        ?? throw new ArgumentException($"unknown command '{name}'");
}

internal sealed class UsageException(string message, string? command) : ArgumentException(message)
{
    public string? Command { get; } = command;
}

/// <summary>The options of a parsed command line: lists are comma-separated and may repeat.</summary>
internal sealed class Args
{
    private readonly Dictionary<string, List<string>> _values = [];
    public Verb Command { get; private set; }

    /// <summary>A UsageException for what System.CommandLine could not take, in words that say which option and what instead.</summary>
    public static Args Parse(string[] argv, SubjectKinds? kinds = null) => From(Cli.Parse(argv, kinds ?? SubjectKinds.Default));

    public static Args From(ParseResult result)
    {
        var command = result.CommandResult.Command;
        if (MissingValue(result) is { } missing) throw missing;
        if (result.Errors.Count > 0) throw Explain(result);
        var a = new Args { Command = Verbs.Of(command.Name) };
        // RUN… of merge and durations.
        foreach (var arg in result.CommandResult.Children.OfType<ArgumentResult>()) a._values["runs"] = [.. arg.Tokens.Select(t => t.Value)];
        foreach (var o in result.CommandResult.Children.OfType<OptionResult>().Where(o => !o.Implicit && o.Option is not HelpOption))
        {
            var name = o.Option.Name[2..];
            if (!a._values.TryGetValue(name, out var list)) a._values[name] = list = [];
            if (o.Option is Option<bool>)
            {
                if (o.GetValueOrDefault<bool>()) list.Add("true");
                else a._values.Remove(name);
                continue;
            }
            foreach (var value in o.Tokens.Select(t => t.Value))
                // An empty value (e.g. SUBJECT= from make) means "not given". An environment value may hold commas.
                if (name == "env") { if (value.Length > 0) list.Add(value); }
                else list.AddRange(value.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        }
        return a;
    }

    /// <summary>
    /// An option followed by another (`--repro --case one`) or by nothing has no value; System.CommandLine would take
    /// the other option as its value. A value never starts with "--".
    /// </summary>
    private static UsageException? MissingValue(ParseResult result)
    {
        var command = result.CommandResult.Command;
        var tokens = result.Tokens;
        for (var i = 0; i < tokens.Count; i++)
            if (tokens[i].Type == TokenType.Option && command.Options.FirstOrDefault(o => o.Name == tokens[i].Value) is Option<string[]> valued
                && (i + 1 == tokens.Count || tokens[i + 1].Type == TokenType.Option || tokens[i + 1].Value.StartsWith("--")))
                return new($"{valued.Name} needs a value", command.Name);
        return null;
    }

    private static UsageException Explain(ParseResult result)
    {
        var command = result.CommandResult.Command;
        var at = command is RootCommand ? null : command.Name;
        if (command is RootCommand)
        {
            // `corpus --root DIR`: options before any command.
            var word = result.UnmatchedTokens.FirstOrDefault();
            if (word is null || word.StartsWith('-')) return new("no command given", null);
            var commands = result.RootCommandResult.Command.Subcommands.Where(c => !c.Hidden).Select(c => c.Name);
            return new($"unknown command '{word}'" + (Closest(word, commands) is { } c ? $" (did you mean {c}?)" : ""), null);
        }
        var options = command.Options.Where(o => o is not HelpOption && !o.Hidden).Select(o => o.Name[2..]).ToList();
        if (result.UnmatchedTokens.FirstOrDefault(t => t.StartsWith('-')) is { } unknown)
        {
            var name = unknown.TrimStart('-').Split('=', ':')[0];
            return new($"unknown option '--{name}' for {command.Name}"
                       + (Closest(name, options) is { } c ? $" (did you mean --{c}?)" : $" (options: --{string.Join(", --", options)})"), at);
        }
        if (result.UnmatchedTokens.Count > 0) return new($"unexpected argument '{result.UnmatchedTokens[0]}'", at);
        return new(result.Errors[0].Message, at);
    }

    private static string? Closest(string name, IEnumerable<string> known) =>
        known.Select(k => (k, d: Distance(name, k))).Where(x => x.d <= 2).OrderBy(x => x.d).Select(x => x.k).FirstOrDefault();

    private static int Distance(string a, string b)
    {
        var d = new int[a.Length + 1, b.Length + 1];
        for (var i = 0; i <= a.Length; i++) d[i, 0] = i;
        for (var j = 0; j <= b.Length; j++) d[0, j] = j;
        for (var i = 1; i <= a.Length; i++)
            for (var j = 1; j <= b.Length; j++)
                d[i, j] = Math.Min(Math.Min(d[i - 1, j] + 1, d[i, j - 1] + 1), d[i - 1, j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
        return d[a.Length, b.Length];
    }

    public bool Has(string name) => _values.ContainsKey(name);
    public string? Get(string name) => _values.TryGetValue(name, out var l) && l.Count > 0 ? l[^1] : null;
    public IReadOnlyList<string> List(string name) => _values.TryGetValue(name, out var l) ? l : [];

    /// <summary>--env NAME=VALUE, given once per variable.</summary>
    public IReadOnlyDictionary<string, string> Env()
    {
        var env = new SortedDictionary<string, string>(StringComparer.Ordinal);
        foreach (var kv in List("env"))
        {
            var eq = kv.IndexOf('=');
            if (eq <= 0 || !System.Text.RegularExpressions.Regex.IsMatch(kv[..eq], "^[A-Za-z_][A-Za-z0-9_]*$"))
                throw new ArgumentException($"--env needs NAME=VALUE with NAME of letters, digits and '_', not '{kv}'");
            env[kv[..eq]] = kv[(eq + 1)..];
        }
        return env;
    }
}
