using Corpus.Harness.Json;
using Corpus.Harness.Model;
using Corpus.Harness.Runner;
using Corpus.Harness.Signatures;
using Corpus.Harness.Subjects;

namespace Corpus.Harness.Capture;

/// <summary>
/// One block of a case's `capture`: what it captures, read and checked by its own class, registered with the families
/// (<see cref="SignatureFamilies"/>) the way a family is. Most captures are taken inside the family's runs (timed
/// snapshots, crash cores) or by an evidence check (time travel); a capture that is a run of its own after the verdict
/// (the trace) does it in <see cref="AfterVerdictAsync"/>.
/// </summary>
public interface ICaptureKind
{
    /// <summary>Its block under a case's "capture": "timed".</summary>
    string Key { get; }

    /// <summary>Its block, every error naming the field; paths are relative to the repro's folder.</summary>
    object ReadSpec(Fields f, string repoDir);

    /// <summary>Checks that need the whole case: its subjects, its program, its family.</summary>
    void Validate(CaseSpec cs, Fields c, CaptureCheck x) { }

    /// <summary>After the family's verdict, on a reproduced or clean cell, before the evidence is checked.</summary>
    Task AfterVerdictAsync(CaptureAfter x) => Task.CompletedTask;
}

/// <summary>What a capture kind's checks may ask: the run's subject kinds, the case's family, every registered plug-in.</summary>
public sealed record CaptureCheck(SubjectKinds Kinds, ISignatureFamily Family, SignatureFamilies Families);

/// <summary>A cell after its verdict: what a capture kind's own run needs.</summary>
public sealed record CaptureAfter(CaseSpec Case, Subject Subject, CellResult Cell, IRunLauncher Runs, Outcome Outcome);

/// <summary>A case's capture blocks by key, each as its kind read it.</summary>
public sealed class CaptureSpecs(IReadOnlyDictionary<string, object> specs)
{
    public static readonly CaptureSpecs None = new(new Dictionary<string, object>());

    public bool Has(string key) => specs.ContainsKey(key);
    public T? Get<T>(string key) where T : class => specs.GetValueOrDefault(key) as T;
    public IEnumerable<string> Keys => specs.Keys;
}
