using Corpus.Harness.Json;
using System.Text.Json;

namespace Corpus.Harness.Json;

/// <summary>
/// Bad input: a manifest or expected file that cannot be used (naming the file and the field), or an invocation
/// that cannot be run (a name that matches nothing, a subject that runs none of the cases). Either way exit 2.
/// </summary>
public sealed class InputException : Exception
{
    public InputException(string file, string field, string problem) : base($"{file}: field '{field}': {problem}") =>
        (File, Field, Problem) = (file, field, problem);

    public InputException(string invocation) : base(invocation) => Problem = invocation;

    /// <summary>The file and field at fault; null for an invocation.</summary>
    public string? File { get; }
    public string? Field { get; }
    public string Problem { get; }
}

/// <summary>
/// Typed, path-tracking access to a JSON object so every error can say which file and field is wrong.
/// </summary>
public sealed partial class Fields
{
    private readonly JsonElement _element;
    public string File { get; }
    public string Path { get; }

    private Fields(string file, string path, JsonElement element)
    {
        File = file;
        Path = path;
        _element = element;
    }

    public static Fields Load(string file)
    {
        string text;
        try { text = System.IO.File.ReadAllText(file); }
        catch (Exception e) { throw new InputException(file, "(file)", e.Message); }
        JsonDocument doc;
        try
        {
            doc = JsonDocument.Parse(text, new JsonDocumentOptions
            {
                CommentHandling = JsonCommentHandling.Skip,
                AllowTrailingCommas = true,
            });
        }
        catch (JsonException e)
        {
            throw new InputException(file, "(syntax)",
                $"not valid JSON at line {e.LineNumber + 1}, byte {e.BytePositionInLine + 1}: {e.Message.Split(" Path:")[0].Split(" LineNumber:")[0]}");
        }
        var root = new Fields(file, "", doc.RootElement);
        root.ExpectKind(JsonValueKind.Object, "an object");
        return root;
    }

    public InputException Error(string problem, string? name = null) => new(File, Join(name), problem);

    private string Join(string? name) =>
        name is null ? (Path.Length == 0 ? "(root)" : Path) : Path.Length == 0 ? name : $"{Path}.{name}";

    private void ExpectKind(JsonValueKind kind, string what)
    {
        if (_element.ValueKind != kind) throw Error($"expected {what}, found {Describe(_element)}");
    }

    private static string Describe(JsonElement e) => e.ValueKind switch
    {
        JsonValueKind.Object => "an object",
        JsonValueKind.Array => "an array",
        JsonValueKind.String => $"the string \"{e.GetString()}\"",
        JsonValueKind.Number => $"the number {e.GetRawText()}",
        JsonValueKind.True or JsonValueKind.False => $"{e.GetRawText()}",
        JsonValueKind.Null => "null",
        _ => e.ValueKind.ToString(),
    };

    public bool Has(string name) =>
        _element.TryGetProperty(name, out var v) && v.ValueKind != JsonValueKind.Null;

    public IEnumerable<string> Names => _element.EnumerateObject().Select(p => p.Name);

    /// <summary>Whether the field is there and a string (for a field that takes a number or a keyword).</summary>
    public bool IsString(string name) => _element.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String;

    /// <summary>Rejects misspelt keys, which would otherwise be silently ignored.</summary>
    public void AllowOnly(params string[] names)
    {
        foreach (var p in _element.EnumerateObject())
            if (!names.Contains(p.Name))
                throw Error($"unknown field; allowed here: {string.Join(", ", names)}", p.Name);
    }

    private JsonElement Get(string name, bool required, out bool found)
    {
        if (_element.TryGetProperty(name, out var v) && v.ValueKind != JsonValueKind.Null)
        {
            found = true;
            return v;
        }
        if (required) throw Error("is required but missing", name);
        found = false;
        return default;
    }

    public string String(string name) => StringOr(name, null, required: true)!;

    public string? StringOr(string name, string? fallback, bool required = false)
    {
        var v = Get(name, required, out var found);
        if (!found) return fallback;
        if (v.ValueKind != JsonValueKind.String || string.IsNullOrWhiteSpace(v.GetString()))
            throw Error($"expected a non-empty string, found {Describe(v)}", name);
        return v.GetString();
    }

    public double Number(string name) => NumberOr(name, null, required: true)!.Value;

    /// <summary>A number in [min, max], or (min, max] with <paramref name="above"/>; the fallback is not checked.</summary>
    public double? NumberOr(string name, double? fallback, bool required = false,
                            double min = double.MinValue, double max = double.MaxValue, bool above = false)
    {
        var v = Get(name, required, out var found);
        if (!found) return fallback;
        if (v.ValueKind != JsonValueKind.Number) throw Error($"expected a number, found {Describe(v)}", name);
        var d = v.GetDouble();
        if (d < min || (above && d <= min) || d > max)
            throw Error($"must be {RangeText(min, max, above)}, found {v.GetRawText()}", name);
        return d;
    }

    public int? IntOr(string name, int? fallback, bool required = false, int min = int.MinValue, int max = int.MaxValue)
    {
        var v = Get(name, required, out var found);
        if (!found) return fallback;
        if (v.ValueKind != JsonValueKind.Number || !v.TryGetInt32(out var i))
            throw Error($"expected an integer, found {Describe(v)}", name);
        if (i < min || i > max) throw Error($"must be {RangeText(min, max, false)}, found {i}", name);
        return i;
    }

    private static string RangeText(double min, double max, bool above) =>
        max is double.MaxValue or int.MaxValue ? (above ? $"greater than {min}" : $"at least {min}")
        : min is double.MinValue or int.MinValue ? $"at most {max}"
        : above ? $"greater than {min} and at most {max}" : $"between {min} and {max}";

    /// <summary>Names of cases, variants and tags end up in paths, make variables and comma lists.</summary>
    public static bool IsName(string s) => s.Length <= 64 && NamePattern().IsMatch(s);

    public const string NameRule = "use letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters";

    [System.Text.RegularExpressions.GeneratedRegex("^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    private static partial System.Text.RegularExpressions.Regex NamePattern();

    public string Name(string name, string? fallback = null, bool required = true)
    {
        var s = StringOr(name, fallback, required);
        if (s is not null && s != fallback && !IsName(s)) throw Error($"'{s}' is not a usable name: {NameRule}", name);
        return s!;
    }

    /// <summary>A list of distinct names, each checked by <see cref="IsName"/>; errors name the element.</summary>
    public IReadOnlyList<string> NameList(string name, bool required = true, bool nonEmpty = true)
    {
        var list = Strings(name, required, nonEmpty);
        for (var i = 0; i < list.Count; i++)
        {
            if (!IsName(list[i])) throw Error($"'{list[i]}' is not a usable name: {NameRule}", $"{name}[{i}]");
            if (list.Take(i).Contains(list[i])) throw Error($"'{list[i]}' is listed twice", $"{name}[{i}]");
        }
        return list;
    }

    /// <summary>Regexes are compiled here, so a bad one is an input error and not a run-time exception.</summary>
    public string? RegexOr(string name, bool required = false)
    {
        var s = StringOr(name, null, required);
        if (s is not null) CheckRegex(s, name);
        return s;
    }

    public IReadOnlyList<string> RegexList(string name, bool required = true, bool nonEmpty = true)
    {
        var list = Strings(name, required, nonEmpty);
        for (var i = 0; i < list.Count; i++) CheckRegex(list[i], $"{name}[{i}]");
        return list;
    }

    private void CheckRegex(string pattern, string name)
    {
        try { _ = new System.Text.RegularExpressions.Regex(pattern, System.Text.RegularExpressions.RegexOptions.Multiline); }
        catch (ArgumentException e) { throw Error($"'{pattern}' is not a valid regular expression: {e.Message}", name); }
    }

    public bool BoolOr(string name, bool fallback)
    {
        var v = Get(name, false, out var found);
        if (!found) return fallback;
        if (v.ValueKind is not (JsonValueKind.True or JsonValueKind.False))
            throw Error($"expected true or false, found {Describe(v)}", name);
        return v.GetBoolean();
    }

    public Fields? ObjectOr(string name, bool required = false)
    {
        var v = Get(name, required, out var found);
        if (!found) return null;
        var f = new Fields(File, Join(name), v);
        f.ExpectKind(JsonValueKind.Object, "an object");
        return f;
    }

    public Fields Object(string name) => ObjectOr(name, required: true)!;

    public IReadOnlyList<Fields> Objects(string name, bool required = true, bool nonEmpty = true)
    {
        var v = Get(name, required, out var found);
        if (!found) return [];
        if (v.ValueKind != JsonValueKind.Array) throw Error($"expected an array, found {Describe(v)}", name);
        var list = new List<Fields>();
        var i = 0;
        foreach (var item in v.EnumerateArray())
        {
            var f = new Fields(File, $"{Join(name)}[{i++}]", item);
            f.ExpectKind(JsonValueKind.Object, "an object");
            list.Add(f);
        }
        if (nonEmpty && list.Count == 0) throw Error("must not be empty", name);
        return list;
    }

    public IReadOnlyList<string> Strings(string name, bool required = true, bool nonEmpty = true)
    {
        var v = Get(name, required, out var found);
        if (!found) return [];
        if (v.ValueKind != JsonValueKind.Array) throw Error($"expected an array of strings, found {Describe(v)}", name);
        var list = new List<string>();
        var i = 0;
        foreach (var item in v.EnumerateArray())
        {
            if (item.ValueKind != JsonValueKind.String || string.IsNullOrWhiteSpace(item.GetString()))
                throw Error($"expected a non-empty string, found {Describe(item)}", $"{name}[{i}]");
            list.Add(item.GetString()!);
            i++;
        }
        if (nonEmpty && list.Count == 0) throw Error("must not be empty", name);
        return list;
    }

    public IReadOnlyList<long> PositiveIntegers(string name)
    {
        var v = Get(name, true, out _);
        if (v.ValueKind != JsonValueKind.Array) throw Error($"expected an array of positive integers, found {Describe(v)}", name);
        var list = new List<long>();
        var i = 0;
        foreach (var item in v.EnumerateArray())
        {
            if (item.ValueKind != JsonValueKind.Number || !item.TryGetInt64(out var n) || n <= 0)
                throw Error($"expected a positive integer, found {Describe(item)}", $"{name}[{i}]");
            list.Add(n);
            i++;
        }
        if (list.Count == 0) throw Error("must not be empty", name);
        return list;
    }

    public IReadOnlyDictionary<string, string> StringMap(string name)
    {
        var v = Get(name, false, out var found);
        if (!found) return new Dictionary<string, string>();
        if (v.ValueKind != JsonValueKind.Object) throw Error($"expected an object of strings, found {Describe(v)}", name);
        var map = new Dictionary<string, string>();
        foreach (var p in v.EnumerateObject())
        {
            if (p.Value.ValueKind != JsonValueKind.String)
                throw Error($"expected a string, found {Describe(p.Value)}", $"{name}.{p.Name}");
            map[p.Name] = p.Value.GetString()!;
        }
        return map;
    }

    public T Enum<T>(string name, IReadOnlyDictionary<string, T> values, T? fallback = default, bool required = true)
    {
        var s = StringOr(name, null, required);
        if (s is null) return fallback!;
        if (!values.TryGetValue(s, out var value))
            throw Error($"'{s}' is not one of: {string.Join(", ", values.Keys)}", name);
        return value;
    }
}
