using System.Text;

namespace Corpus.Harness.Fixtures;

/// <summary>One [KEY] or [-KEY] section of a .reg file, with its value lines as written ("name"=data).</summary>
public sealed record RegSection(string Key, bool Delete, IReadOnlyList<string> Values, int Line);

/// <summary>
/// A .reg file as regedit and reg.exe write and read it: a header, then [KEY] sections (or [-KEY] to delete a key
/// and everything below it) with "name"=data lines. Read strictly, so a fixture with a typo is an input error, not a
/// silently different machine state. Values stay text: reg.exe writes and reads them, the harness compares them.
/// </summary>
public static class RegFile
{
    public static readonly IReadOnlyDictionary<string, string> Hives = new Dictionary<string, string>
    {
        ["HKEY_LOCAL_MACHINE"] = "HKLM", ["HKEY_CURRENT_USER"] = "HKCU", ["HKEY_CLASSES_ROOT"] = "HKCR",
        ["HKEY_USERS"] = "HKU", ["HKEY_CURRENT_CONFIG"] = "HKCC",
    };

    /// <summary>The sections of a .reg file; a FormatException names the line and what is wrong.</summary>
    public static IReadOnlyList<RegSection> Parse(string file) => ParseText(Decode(File.ReadAllBytes(file)));

    /// <summary>reg.exe exports UTF-16 LE with a BOM; hand-written files are usually UTF-8 or ASCII.</summary>
    public static string Decode(byte[] bytes) =>
        bytes is [0xFF, 0xFE, ..] ? Encoding.Unicode.GetString(bytes, 2, bytes.Length - 2)
        : bytes is [0xEF, 0xBB, 0xBF, ..] ? Encoding.UTF8.GetString(bytes, 3, bytes.Length - 3)
        : Encoding.UTF8.GetString(bytes);

    public static IReadOnlyList<RegSection> ParseText(string text)
    {
        var lines = text.Replace("\r\n", "\n").Split('\n');
        var first = lines.Select((l, i) => (l: l.Trim(), i)).FirstOrDefault(x => x.l.Length > 0);
        if (first.l is not ("Windows Registry Editor Version 5.00" or "REGEDIT4"))
            throw new FormatException($"line {first.i + 1}: a .reg file starts with 'Windows Registry Editor Version 5.00', found '{first.l}'");
        var sections = new List<RegSection>();
        string? key = null;
        bool delete = false;
        int at = 0;
        var values = new List<string>();
        void Close()
        {
            if (key is not null) sections.Add(new RegSection(key, delete, values.ToList(), at));
            values.Clear();
        }
        for (var i = first.i + 1; i < lines.Length; i++)
        {
            var line = lines[i].TrimEnd();
            // A value continues on the next line after a trailing backslash (long hex data).
            while (line.EndsWith('\\') && !line.StartsWith('[') && i + 1 < lines.Length) line = line[..^1] + lines[++i].Trim();
            var n = i + 1;
            if (line.Trim().Length == 0 || line.TrimStart().StartsWith(';')) continue;
            if (line.StartsWith('['))
            {
                if (!line.EndsWith(']')) throw new FormatException($"line {n}: a key line must end with ']': '{line}'");
                Close();
                var name = line[1..^1];
                delete = name.StartsWith('-');
                if (delete) name = name[1..];
                var hive = name.Split('\\')[0];
                if (!Hives.ContainsKey(hive))
                    throw new FormatException($"line {n}: '{hive}' is not a registry hive (use {string.Join(", ", Hives.Keys)})");
                if (name.Split('\\').Skip(1).Any(p => p.Length == 0)) throw new FormatException($"line {n}: empty key name in '{name}'");
                key = name;
                at = n;
                continue;
            }
            if (key is null) throw new FormatException($"line {n}: a value before any [KEY] line: '{line}'");
            if (delete) throw new FormatException($"line {n}: [-{key}] deletes the key; it cannot have values");
            if (!(line.StartsWith('"') || line.StartsWith('@')) || !line.Contains('='))
                throw new FormatException($"line {n}: not a value line (\"name\"=data or @=data): '{line}'");
            values.Add(line);
        }
        Close();
        return sections;
    }

    /// <summary>HKEY_LOCAL_MACHINE\X as reg.exe takes it on its command line: HKLM\X.</summary>
    public static string Short(string key)
    {
        var hive = key.Split('\\')[0];
        return Hives.TryGetValue(hive, out var s) ? s + key[hive.Length..] : key;
    }

    /// <summary>Whether key is at or below ancestor (registry names compare case-insensitively).</summary>
    public static bool IsAtOrBelow(string key, string ancestor) =>
        key.Equals(ancestor, StringComparison.OrdinalIgnoreCase)
        || key.StartsWith(ancestor + "\\", StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// What the registry holds after the files are applied in order, as far as they say: for each key named, either
    /// deleted, or present with at least these value lines (a later file overrides an earlier one's value).
    /// </summary>
    public static IReadOnlyDictionary<string, (bool Deleted, Dictionary<string, string> Values)> FinalState(
        IEnumerable<IReadOnlyList<RegSection>> files)
    {
        var state = new Dictionary<string, (bool Deleted, Dictionary<string, string> Values)>(StringComparer.OrdinalIgnoreCase);
        foreach (var s in files.SelectMany(f => f))
        {
            if (s.Delete)
            {
                foreach (var k in state.Keys.Where(k => IsAtOrBelow(k, s.Key)).ToList()) state.Remove(k);
                state[s.Key] = (true, new Dictionary<string, string>());
                continue;
            }
            // Creating a key also re-creates its deleted ancestors.
            foreach (var k in state.Keys.Where(k => state[k].Deleted && IsAtOrBelow(s.Key, k)).ToList()) state.Remove(k);
            if (!state.TryGetValue(s.Key, out var entry) || entry.Deleted)
                state[s.Key] = entry = (false, new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase));
            foreach (var v in s.Values) entry.Values[ValueName(v)] = v;
        }
        return state;
    }

    /// <summary>The name part of a value line: "ImageList" in "ImageList"=hex:…, "@" for the default value.</summary>
    public static string ValueName(string line)
    {
        if (line.StartsWith('@')) return "@";
        var sb = new StringBuilder();
        for (var i = 1; i < line.Length; i++)
        {
            if (line[i] == '\\' && i + 1 < line.Length) sb.Append(line[++i]);
            else if (line[i] == '"') break;
            else sb.Append(line[i]);
        }
        return sb.ToString();
    }

    /// <summary>The value lines of one key's own section in a reg.exe export (not its subkeys'), continuations joined.</summary>
    public static IReadOnlyList<string> ValuesOf(IReadOnlyList<RegSection> export, string key) =>
        export.FirstOrDefault(s => s.Key.Equals(key, StringComparison.OrdinalIgnoreCase))?.Values ?? [];
}
