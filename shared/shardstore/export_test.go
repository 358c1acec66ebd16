package shardstore

// The refund progress statements, for their plans' test.
var RefundCountsSQL, PaidOrdersSQL, FailedRefundsSQL = refundCountsSQL, paidOrdersSQL, failedRefundsSQL
