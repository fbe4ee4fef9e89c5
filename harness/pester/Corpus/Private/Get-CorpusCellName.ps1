function Get-CorpusCellName {
    # A cell as the corpus prints it: repro:case/variant/subject.
    param([Parameter(Mandatory)] $Cell)
    "$($Cell.Repro):$($Cell.Case)/$($Cell.Variant)/$($Cell.Subject)"
}
