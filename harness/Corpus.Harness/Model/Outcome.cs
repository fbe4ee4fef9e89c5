namespace Corpus.Harness.Model;

public enum Outcome { Reproduced, Clean, WrongFailure, Unsupported, Error }

public static class Outcomes
{
    public static readonly IReadOnlyDictionary<string, Outcome> ByName = new Dictionary<string, Outcome>
    {
        ["reproduced"] = Outcome.Reproduced,
        ["clean"] = Outcome.Clean,
        ["wrong-failure"] = Outcome.WrongFailure,
        ["unsupported"] = Outcome.Unsupported,
        ["error"] = Outcome.Error,
    };

    public static string Name(this Outcome o) => ByName.First(kv => kv.Value == o).Key;
}
