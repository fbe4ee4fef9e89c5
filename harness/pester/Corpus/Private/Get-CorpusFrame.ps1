function Get-CorpusFrame {
    # Every frame of every captured stack of a cell, each with the file and thread it came from: dump-facts' JSON
    # (threads[].frames) and the text backtraces of winedbg and Mono (one frame a line).
    param([Parameter(Mandatory)] $Cell)
    foreach ($file in $Cell.StackSnapshots) {
        if ($file -like '*.json') {
            $doc = Get-Content -Raw -LiteralPath $file | ConvertFrom-Json
            foreach ($thread in @($doc.threads)) {
                foreach ($frame in @($thread.frames)) {
                    [pscustomobject]@{ File = $file; Thread = "managed $($thread.managedThreadId)"; Frame = $frame }
                }
            }
        }
        else {
            foreach ($line in Get-Content -LiteralPath $file) {
                if ($line.Trim()) { [pscustomobject]@{ File = $file; Thread = ''; Frame = $line.Trim() } }
            }
        }
    }
}
