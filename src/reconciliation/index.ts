export { Reconciler, type Finding, type PassSummary, type ReconcileTarget } from './reconciler';
export { ReconcileSchedule, backoffSeconds } from './schedule';
export { Pacer, readOnlyPaced } from './pacer';
export { ReconcileNow, reconcileDocument, reconcileSummary, type ReconcileDocument, type ReconcileOutcome, type ReconcileScope } from './reconcile-now.use-case';
