ALTER TABLE `reports` ADD `target_author_id` text;--> statement-breakpoint
-- Hand-written (issue 56): reports filed before this migration get the author their target has now; one whose target is already gone keeps none.
UPDATE `reports` SET `target_author_id` = CASE `target_type`
  WHEN 'segment' THEN (SELECT `author_id` FROM `segments` WHERE `id` = `reports`.`target_id`)
  WHEN 'comment' THEN (SELECT `author_id` FROM `comments` WHERE `id` = `reports`.`target_id`)
  WHEN 'story' THEN (SELECT `owner_id` FROM `stories` WHERE `id` = `reports`.`target_id`)
  WHEN 'branch' THEN (SELECT `creator_id` FROM `branches` WHERE `id` = `reports`.`target_id`)
  WHEN 'account' THEN COALESCE((SELECT `id` FROM `users` WHERE `id` = `reports`.`target_id`), (SELECT `id` FROM `bots` WHERE `id` = `reports`.`target_id`))
END;
