namespace Corpus.Harness.Model;

/// <summary>
/// What a cell showed. Inconclusive: a measured figure stayed undecided between its bounds when the measurement's
/// budget ran out; an outcome of its own, never reproduced, clean or a wrong-failure.
/// </summary>
public enum Outcome { Reproduced, Clean, WrongFailure, Unsupported, Error, Inconclusive }

public static class Outcomes
{
    public static readonly IReadOnlyDictionary<string, Outcome> ByName = new Dictionary<string, Outcome>
    {
        ["reproduced"] = Outcome.Reproduced,
        ["clean"] = Outcome.Clean,
        ["wrong-failure"] = Outcome.WrongFailure,
        ["unsupported"] = Outcome.Unsupported,
        ["error"] = Outcome.Error,
        ["inconclusive"] = Outcome.Inconclusive,
    };

    public static string Name(this Outcome o) => ByName.First(kv => kv.Value == o).Key;
}
