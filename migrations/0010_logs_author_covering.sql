DROP INDEX `logs_author_created_idx`;--> statement-breakpoint
CREATE INDEX `logs_author_created_idx` ON `logs` (`author_id`,`created_at`,`is_continuation`,`branch_id`);