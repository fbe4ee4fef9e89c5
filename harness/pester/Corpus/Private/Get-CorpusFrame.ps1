function Get-CorpusFrame {
    # Every frame of every captured stack of a cell, each with where it came from: facts.json's captures carry their
    # threads' frames (dump-facts' of a createdump core, winedbg's and Mono's backtraces), also after the capture files
    # were pruned.
    param([Parameter(Mandatory)] $Cell)
    foreach ($capture in $Cell.Captures) {
        foreach ($thread in $capture.Threads) {
            foreach ($frame in @($thread.frames)) {
                [pscustomobject]@{ File = $capture.Path; Thread = $thread.thread; Frame = $frame }
            }
        }
    }
}
