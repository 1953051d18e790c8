EXCHANGE TABLES wr64 AND window_rollups_v2
