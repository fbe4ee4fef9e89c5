using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;

namespace Corpus.Harness.Signatures;

/// <summary>
/// A case that checks machine state its fixture set up (Model.FixtureSpec): one run, which must see the fixture
/// applied (the pattern: exit and output). `clean` when it did; the runner then turns the cell into an `error` if
/// the fixture was not restored byte for byte. There is no `reproduced`: a fixture case shows no bug of its own.
/// Its facts are the process family's, with `matched`: the text each output pattern matched, so a pattern such as
/// "REPRO-REACHED fixture seen: .+" records what the program saw.
/// </summary>
public sealed class FixtureFamily : ISignatureFamily
{
    public string Key => "fixture";
    public object ReadSpec(Fields f) => ProcessPattern.Read(f);

    public void Validate(CaseSpec cs, Fields c)
    {
        if (cs.Fixture is null)
            throw c.Error("a fixture signature judges a case with a 'fixture'; this case has none", "signature.fixture");
    }

    public async Task<Verdict> RunAsync(IRunLauncher runs, CellResult cell)
    {
        RunOutput output;
        using (RunTicker.Start(runs, cell.Key.ToString())) output = await runs.ExecuteAsync(null, "run", runs.Case.Timed);
        var (run, metrics, _) = output;
        var pattern = runs.Case.Signature.Get<ProcessPattern>(Key)!;
        // What the program said it saw (the text each output pattern matched), as a fact: readers never parse run.stdout.
        var facts = ProcessFacts.Of(run, metrics) with { Matched = ProcessFamily.Matches(pattern, run) };
        var miss = ProcessMatch.Mismatch(pattern, run);
        var (outcome, detail) = miss is null
            ? (Outcome.Clean, $"{run.Status}; the run saw the fixture applied")
            : (Outcome.WrongFailure, $"the run did not see the fixture applied ({miss}); {ProcessMatch.Tail(run)}");
        return new Verdict(outcome, detail) { Facts = facts, KeyFigures = facts.KeyFigures() };
    }
}
