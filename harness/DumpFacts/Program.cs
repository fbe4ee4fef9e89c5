using System.Text.Encodings.Web;
using System.Text.Json;
using Corpus.DumpFacts;

const string Usage = "usage: DumpFacts DUMP [--no-heap] [--top K] [--top-frames N] [--dac LIBMSCORDACCORE] [--out FILE]";

string? dump = null, outFile = null;
var options = new Options();
for (int i = 0; i < args.Length; i++)
{
    string arg = args[i];
    string? Value() => i + 1 < args.Length ? args[++i] : null;
    switch (arg)
    {
        case "--no-heap": options = options with { Heap = false }; break;
        case "--top" when int.TryParse(Value(), out int k) && k >= 0: options = options with { Top = k }; break;
        case "--top-frames" when int.TryParse(Value(), out int n) && n >= 0: options = options with { TopFrames = n }; break;
        case "--dac" when Value() is { } dac: options = options with { DacPath = dac }; break;
        case "--out" when Value() is { } file: outFile = file; break;
        case "-h" or "--help": Console.WriteLine(Usage); return 0;
        case not null when !arg.StartsWith('-') && dump is null: dump = arg; break;
        default: return BadArgs($"unexpected or incomplete argument '{arg}'");
    }
}
if (dump is null)
    return BadArgs("no dump given");

Facts facts;
try
{
    facts = Extractor.Extract(dump, options);
}
catch (DumpOpenException e)
{
    Console.Error.WriteLine($"DumpFacts: {e.Message}");
    return 3;
}

var json = JsonSerializer.Serialize(facts, new JsonSerializerOptions(JsonSerializerDefaults.Web)
{
    WriteIndented = true,
    // Keep "Outer+Nested" and "List`1<T>" readable; the output is never embedded in HTML.
    Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
});
if (outFile is null)
    Console.WriteLine(json);
else
    File.WriteAllText(outFile, json + Environment.NewLine);
return 0;

static int BadArgs(string why)
{
    Console.Error.WriteLine($"DumpFacts: {why}");
    Console.Error.WriteLine(Usage);
    return 2;
}
