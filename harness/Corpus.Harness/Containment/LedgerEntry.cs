using System.Text;

namespace Corpus.Harness.Containment;

/// <summary>
/// One line of a harness's ledger and of the supervisor's pipe: a kind and its fields, separated by single spaces. In a
/// field, '%', space, tab, CR, LF and backslash are written %XX (hex), so a path with spaces stays one field; the
/// supervisor decodes a field with bash's printf %b after turning % into \x.
/// </summary>
public static class LedgerEntry
{
    public static string Format(string kind, params string[] fields) =>
        string.Join(' ', [kind, .. fields.Select(Escape)]);

    /// <summary>The kind and the decoded fields of a line; an empty line is no kind at all.</summary>
    public static (string Kind, string[] Fields) Parse(string line)
    {
        var parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return parts.Length == 0 ? ("", []) : (parts[0], [.. parts[1..].Select(Unescape)]);
    }

    public static string Escape(string field)
    {
        var sb = new StringBuilder(field.Length);
        foreach (var c in field)
            if (c is '%' or ' ' or '\t' or '\r' or '\n' or '\\') sb.Append('%').Append(((int)c).ToString("X2"));
            else sb.Append(c);
        return sb.ToString();
    }

    public static string Unescape(string field)
    {
        if (!field.Contains('%')) return field;
        // Only ASCII characters are escaped, so each %XX is one char.
        var sb = new StringBuilder(field.Length);
        for (var i = 0; i < field.Length; i++)
            if (field[i] == '%' && i + 2 < field.Length && Uri.IsHexDigit(field[i + 1]) && Uri.IsHexDigit(field[i + 2]))
            {
                sb.Append((char)Convert.ToByte(field.Substring(i + 1, 2), 16));
                i += 2;
            }
            else sb.Append(field[i]);
        return sb.ToString();
    }
}
