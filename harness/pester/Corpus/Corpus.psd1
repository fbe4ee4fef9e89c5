@{
    RootModule        = 'Corpus.psm1'
    ModuleVersion     = '0.1.0'
    GUID              = '59f9adec-1ae2-4a17-92b5-f9a022419186'
    Author            = 'the corpus'
    Description       = 'The reproducer corpus from PowerShell: lists and runs cells through `corpus`, reads finished runs, and adds the Should operators Reproduce, BeClean and HaveFrame. The engine stays in corpus; this module only calls it and reads what it writes.'
    PowerShellVersion = '7.4'
    # The Should operators are registered with this Pester at import.
    RequiredModules   = @(@{ ModuleName = 'Pester'; RequiredVersion = '5.7.1' })
    FunctionsToExport = @('Get-CorpusCell', 'Invoke-CorpusCell', 'Get-CorpusRun', 'Get-CorpusCellResult')
    CmdletsToExport   = @()
    VariablesToExport = @()
    AliasesToExport   = @()
}
