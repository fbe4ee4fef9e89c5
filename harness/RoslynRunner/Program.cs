using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using System.Runtime.Loader;
using System.Text;

namespace Corpus.RoslynRunner;

/// <summary>
/// Runs one Roslyn version over one source text: `parse` (CSharpSyntaxTree.ParseText) or `compile` (the
/// diagnostics of a compilation). The compiler is loaded by reflection from a folder, so the same runner works
/// for 2.x through 5.x, whose signatures differ in optional parameters.
/// </summary>
public static class Program
{
    private const string Usage = """
        usage: roslyn-runner --roslyn DIR (parse|compile) SOURCE...
          SOURCE, concatenated in order:  --text TEXT | --repeat N TEXT | --file PATH
          DIR holds Microsoft.CodeAnalysis.dll and Microsoft.CodeAnalysis.CSharp.dll
        prints: DIAGNOSTIC lines, DIAGNOSTIC-IDS, METRIC {"parse_s"|"compile_s", "diagnostics", "chars"}, REPRO-DONE
        """;

    public static int Main(string[] argv)
    {
        try
        {
            var (dir, mode, text) = ParseArgs(argv);
            var roslyn = RoslynApi.Load(dir);
            Console.WriteLine($"REPRO-REACHED roslyn-loaded {roslyn.Version} from {dir}");
            // Warm up on a trivial file so the timed parse measures the parser, not the JIT.
            roslyn.Parse("class W { int P { get; } }");
            Console.WriteLine($"REPRO-REACHED {mode}-start chars={text.Length}");
            var clock = Stopwatch.StartNew();
            var diagnostics = mode == "parse" ? roslyn.ParseDiagnostics(text) : roslyn.CompileDiagnostics(text);
            var seconds = clock.Elapsed.TotalSeconds;
            foreach (var d in diagnostics.Take(20)) Console.WriteLine($"DIAGNOSTIC {d}");
            var ids = diagnostics.Select(d => d.Id).Distinct().ToList();
            Console.WriteLine($"DIAGNOSTIC-IDS {(ids.Count == 0 ? "none" : string.Join(",", ids))}");
            Console.WriteLine("METRIC {\"" + mode + "_s\": " + seconds.ToString("0.######", CultureInfo.InvariantCulture)
                              + ", \"diagnostics\": " + diagnostics.Count + ", \"chars\": " + text.Length + "}");
            Console.WriteLine("REPRO-DONE");
            return 0;
        }
        catch (ArgumentException e)
        {
            Console.Error.WriteLine($"roslyn-runner: {e.Message}");
            Console.Error.WriteLine(Usage);
            return 2;
        }
    }

    internal static (string Dir, string Mode, string Text) ParseArgs(IReadOnlyList<string> argv)
    {
        string? dir = null, mode = null;
        var text = new StringBuilder();
        string Next(ref int i, string option) =>
            ++i < argv.Count ? argv[i] : throw new ArgumentException($"option {option} needs a value");
        for (var i = 0; i < argv.Count; i++)
        {
            switch (argv[i])
            {
                case "--roslyn": dir = Next(ref i, "--roslyn"); break;
                case "--text": text.Append(Next(ref i, "--text")); break;
                case "--file":
                    var file = Next(ref i, "--file");
                    if (!File.Exists(file)) throw new ArgumentException($"--file {file}: no such file");
                    text.Append(File.ReadAllText(file));
                    break;
                case "--repeat":
                    var count = Next(ref i, "--repeat");
                    if (!int.TryParse(count, NumberStyles.None, CultureInfo.InvariantCulture, out var n) || n > 1_000_000)
                        throw new ArgumentException($"--repeat needs a count from 0 to 1000000, found '{count}'");
                    var piece = Next(ref i, "--repeat N");
                    for (var k = 0; k < n; k++) text.Append(piece);
                    break;
                case "parse" or "compile" when mode is null: mode = argv[i]; break;
                default: throw new ArgumentException($"unknown argument '{argv[i]}'");
            }
        }
        if (dir is null) throw new ArgumentException("--roslyn DIR is required");
        if (mode is null) throw new ArgumentException("give a mode: parse or compile");
        if (text.Length == 0) throw new ArgumentException("no source text: give --text, --repeat or --file");
        return (dir, mode, text.ToString());
    }
}

public sealed record Diagnostic(string Id, string Severity, int Line, int Column, string Message)
{
    public override string ToString() => $"{Id} {Severity.ToLowerInvariant()} ({Line},{Column}): {Message}";
}

/// <summary>The few Roslyn entry points the runner needs, bound by reflection to whatever version is in the folder.</summary>
public sealed class RoslynApi
{
    private readonly Assembly _csharp;
    private readonly Assembly _common;
    public string Version { get; }

    private RoslynApi(Assembly csharp, Assembly common)
    {
        _csharp = csharp;
        _common = common;
        var info = csharp.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion
                   ?? csharp.GetName().Version?.ToString() ?? "?";
        Version = info.Split('+')[0];
    }

    public static RoslynApi Load(string dir)
    {
        var csharp = Path.Combine(dir, "Microsoft.CodeAnalysis.CSharp.dll");
        var common = Path.Combine(dir, "Microsoft.CodeAnalysis.dll");
        if (!File.Exists(csharp) || !File.Exists(common))
            throw new ArgumentException($"--roslyn {dir}: needs Microsoft.CodeAnalysis.CSharp.dll and Microsoft.CodeAnalysis.dll");
        var context = new FolderContext(Path.GetFullPath(dir));
        return new RoslynApi(context.LoadFromAssemblyPath(Path.GetFullPath(csharp)), context.LoadFromAssemblyPath(Path.GetFullPath(common)));
    }

    /// <summary>Assemblies of the compiler's folder first; everything else (System.*) from the runtime.</summary>
    private sealed class FolderContext(string dir) : AssemblyLoadContext("roslyn", isCollectible: false)
    {
        protected override Assembly? Load(AssemblyName name)
        {
            var file = Path.Combine(dir, name.Name + ".dll");
            // The runtime's own System.* are newer than what any Roslyn asks for; prefer them.
            if (name.Name is { } n && (n.StartsWith("System.", StringComparison.Ordinal) || n is "netstandard" or "mscorlib")) return null;
            return File.Exists(file) ? LoadFromAssemblyPath(file) : null;
        }
    }

    private Type CSharp(string name) => _csharp.GetType("Microsoft.CodeAnalysis.CSharp." + name, throwOnError: true)!;
    private Type Common(string name) => _common.GetType("Microsoft.CodeAnalysis." + name, throwOnError: true)!;

    /// <summary>Calls the overload whose leading parameter types match, with every other parameter at its default.</summary>
    private static object? Call(Type type, string method, params object[] leading)
    {
        var m = type.GetMethods(BindingFlags.Public | BindingFlags.Static)
            .Where(x => x.Name == method && Fits(x.GetParameters(), leading))
            .OrderByDescending(x => x.GetParameters().Length).FirstOrDefault()
            ?? throw new MissingMethodException(type.FullName, method);
        return m.Invoke(null, Fill(m.GetParameters(), leading));
    }

    private static bool Fits(ParameterInfo[] ps, object[] leading) =>
        ps.Length >= leading.Length
        && leading.Select((a, i) => ps[i].ParameterType.IsInstanceOfType(a)).All(x => x)
        && ps.Skip(leading.Length).All(p => p.IsOptional);

    private static object?[] Fill(ParameterInfo[] ps, object[] leading) =>
        ps.Select((p, i) => i < leading.Length ? leading[i]
                            : p.HasDefaultValue && p.DefaultValue is not null ? p.DefaultValue
                            : p.ParameterType.IsValueType ? Activator.CreateInstance(p.ParameterType) : null).ToArray();

    private static object? Invoke(object target, string method)
    {
        var m = target.GetType().GetMethods(BindingFlags.Public | BindingFlags.Instance)
            .Where(x => x.Name == method && x.GetParameters().All(p => p.IsOptional))
            .OrderBy(x => x.GetParameters().Length).First();
        return m.Invoke(target, Fill(m.GetParameters(), []));
    }

    private static object? Get(object target, string property) => target.GetType().GetProperty(property)!.GetValue(target);

    public object Parse(string text) => Call(CSharp("CSharpSyntaxTree"), "ParseText", text)!;

    public IReadOnlyList<Diagnostic> ParseDiagnostics(string text) => Read(Invoke(Parse(text), "GetDiagnostics"));

    public IReadOnlyList<Diagnostic> CompileDiagnostics(string text)
    {
        var tree = Parse(text);
        var trees = Array.CreateInstance(Common("SyntaxTree"), 1);
        trees.SetValue(tree, 0);
        var tpa = ((string?)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES") ?? "").Split(Path.PathSeparator)
            .Where(p => Path.GetFileName(p) is var f && (f.StartsWith("System.", StringComparison.Ordinal) || f is "netstandard.dll" or "mscorlib.dll"))
            .ToList();
        var refs = Array.CreateInstance(Common("MetadataReference"), tpa.Count);
        for (var i = 0; i < tpa.Count; i++) refs.SetValue(Call(Common("MetadataReference"), "CreateFromFile", tpa[i]), i);
        var optionsType = CSharp("CSharpCompilationOptions");
        var outputKind = Enum.Parse(Common("OutputKind"), "DynamicallyLinkedLibrary");
        var ctor = optionsType.GetConstructors().Where(c => c.GetParameters() is { Length: > 0 } ps && ps[0].ParameterType == outputKind.GetType()
                                                             && ps.Skip(1).All(p => p.IsOptional))
            .OrderByDescending(c => c.GetParameters().Length).First();
        var options = ctor.Invoke(Fill(ctor.GetParameters(), [outputKind]));
        var compilation = Call(CSharp("CSharpCompilation"), "Create", "repro", trees, refs, options)!;
        return Read(Invoke(compilation, "GetDiagnostics"));
    }

    private static List<Diagnostic> Read(object? diagnostics)
    {
        var list = new List<Diagnostic>();
        foreach (var d in (System.Collections.IEnumerable)diagnostics!)
        {
            var span = Invoke(Get(d, "Location")!, "GetLineSpan")!;
            var start = Get(span, "StartLinePosition")!;
            list.Add(new Diagnostic((string)Get(d, "Id")!, Get(d, "Severity")!.ToString()!, (int)Get(start, "Line")! + 1,
                                    (int)Get(start, "Character")! + 1, (string)Invoke(d, "GetMessage")!));
        }
        return list;
    }
}
